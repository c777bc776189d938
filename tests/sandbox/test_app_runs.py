"""The app and the real sandbox worker together: a smaller set than tests/runs/test_runs.py
(which scripts the runs), proving that what the app sends and reads is what the worker
speaks."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, create_engine, select

from app.main import create_app
from app.models import Item, Run
from app.settings import RunQueueKind, Settings
from tests.support.forms import csrf_token
from tests.support.runs import events_of
from tests.support.sandbox_worker import WorkerHandle, needs_isolation, running_worker

pytestmark = needs_isolation


def live_settings(settings: Settings, socket: Path, **changes: Any) -> Settings:
    return settings.model_copy(
        update={"sandbox_socket": socket, "run_queue": RunQueueKind.local, **changes}
    )


@pytest.fixture
def run_client(settings: Settings, worker: WorkerHandle) -> Iterator[TestClient]:
    """A browser (visitor cookie, the page's CSRF token) on the app with the real worker."""
    with TestClient(create_app(live_settings(settings, worker.socket_path))) as client:
        client.headers["X-CSRF-Token"] = csrf_token(client)
        yield client


def test_a_run_streams_its_output_and_is_stored(run_client: TestClient, database_url: str) -> None:
    response = run_client.post(
        "/api/runs",
        json={
            "code": "import torch\nprint(torch.arange(3).tolist())",
            "backend": "cpu",
            "item": "dropout",
            "sample": 1,
        },
    )
    assert response.status_code == 202
    run_id = response.json()["id"]
    events = events_of(run_client, run_id)
    kinds = [k for k, _ in events]
    assert kinds[0] == "started" and kinds[-1] == "result"
    assert "".join(e["data"] for k, e in events if k == "stdout") == "[0, 1, 2]\n"
    result = events[-1][1]
    assert result["verdict"] == "ok" and result["exit_code"] == 0
    assert result["backend"] == "cpu" and result["device"]
    stored = run_client.get(f"/api/runs/{run_id}").json()
    assert stored["status"] == "done" and stored["stdout"] == "[0, 1, 2]\n"
    with Session(create_engine(database_url)) as session:
        run = session.get(Run, run_id)
        item = session.exec(select(Item).where(Item.slug == "dropout")).one()
    assert run is not None and run.item_id == item.id and run.sample_index == 1
    assert run.verdict == "ok" and run.wall_ms and run.wall_ms > 0


def test_cancel_ends_the_run_killed(run_client: TestClient) -> None:
    run_id = run_client.post(
        "/api/runs", json={"code": "import time\nprint('start', flush=True)\ntime.sleep(60)"}
    ).json()["id"]
    with run_client.stream("GET", f"/api/runs/{run_id}/events") as response:
        for line in response.iter_lines():
            if line.startswith("event: stdout"):
                break
    assert run_client.post(f"/api/runs/{run_id}/cancel").status_code == 202
    result = events_of(run_client, run_id)[-1][1]
    assert result["verdict"] == "killed" and result["detail"] == "Cancelled."


def test_a_full_queue_answers_503_with_retry_after(settings: Settings, tmp_path: Path) -> None:
    with running_worker(tmp_path / "busy", "--cpu-slots", "1", "--max-queue", "0") as busy:
        app_settings = live_settings(settings, busy.socket_path, concurrent_runs=5)
        with TestClient(create_app(app_settings)) as client:
            client.headers["X-CSRF-Token"] = csrf_token(client)
            holder = client.post("/api/runs", json={"code": "import time\ntime.sleep(4)"})
            assert holder.status_code == 202
            response = client.post("/api/runs", json={"code": "print(1)"})
            assert response.status_code == 503
            assert response.headers["retry-after"] == "5"
            assert "busy" in response.json()["detail"]
            events_of(client, holder.json()["id"])


def test_health_lists_the_backends(run_client: TestClient) -> None:
    sandbox = run_client.get("/api/health").json()["sandbox"]
    assert sandbox["available"] is True and sandbox["state"] == "ready"
    assert "cpu" in sandbox["backends"] and sandbox["devices"]["cpu"]


def test_two_visitors_run_at_the_same_time(run_client: TestClient) -> None:
    results: list[dict[str, Any]] = []

    def one(n: int) -> None:
        run_id = run_client.post("/api/runs", json={"code": f"print({n})"}).json()["id"]
        results.append(events_of(run_client, run_id)[-1][1])

    threads = [threading.Thread(target=one, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r["stdout"] for r in results) == ["0\n", "1\n"]
