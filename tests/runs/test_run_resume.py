"""The events stream's ids, with the in-process queue: each event has one, and a client that
reconnects with Last-Event-ID resumes after it, without output lost or repeated. (Through
Redis, the ids are stream entry ids: tests/scaleout/test_fleet_runs.py.)"""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.runs import sse_frames


def frames(client: TestClient, run_id: str, **headers: str) -> list[tuple[str | None, str]]:
    """(id, event) of each frame, up to the result."""
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        found = list(sse_frames(response.iter_lines()))
    assert found[-1][2]["status"] == "done"
    return [(event_id, kind) for event_id, kind, _ in found]


def test_a_reconnecting_client_resumes_after_the_last_event_it_saw(client: TestClient) -> None:
    client.cookies.clear()
    accepted = client.post("/api/runs", json={"code": "print('one')"}).json()
    owner = {"X-Run-Token": accepted["token"]}
    whole = frames(client, accepted["id"], **owner)
    assert [kind for _, kind in whole] == ["started", "stdout", "result"]
    assert [event_id for event_id, _ in whole] == ["1", "2", "3"]
    resumed = frames(client, accepted["id"], **owner, **{"Last-Event-ID": "1"})
    assert resumed == whole[1:]
    # A run the queue no longer carries: only the stored result, no output again.
    past = frames(client, accepted["id"], **owner, **{"Last-Event-ID": "3"})
    assert [kind for _, kind in past] == ["result"]
