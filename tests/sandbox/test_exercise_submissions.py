"""Exercise submissions from the HTTP request to the graded result, through the real worker
and grader: what the app sends is what the worker grades, and what it stores is what the
grader found (tests/exercises/test_submissions.py scripts the rest)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from app.settings import PROJECT_ROOT, RunQueueKind, Settings
from tests.support.forms import csrf_token
from tests.support.runs import sse_frames
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytestmark = needs_isolation
SLUG = "stable-softmax"
FOLDER = PROJECT_ROOT / "content" / "exercises" / SLUG
URL = f"/api/exercises/{SLUG}/submissions"


@pytest.fixture
def live_client(settings: Settings, worker: WorkerHandle) -> Iterator[TestClient]:
    live = settings.model_copy(
        update={"sandbox_socket": worker.socket_path, "run_queue": RunQueueKind.local}
    )
    with TestClient(create_app(live)) as client:
        client.headers["X-CSRF-Token"] = csrf_token(client)
        yield client


def graded(client: TestClient, code: str, mode: str) -> tuple[list[dict], dict]:
    accepted = client.post(URL, json={"code": code, "backend": "cpu", "mode": mode})
    assert accepted.status_code == 202, accepted.text
    url = f"{URL}/{accepted.json()['id']}"
    with client.stream("GET", f"{url}/events") as response:
        frames = [(kind, data) for _, kind, data in sse_frames(response.iter_lines())]
    tests = [data["test"] for kind, data in frames if kind == "test"]
    kind, result = frames[-1]
    assert kind == "result"
    assert client.get(url).json() == result  # what was streamed is what was stored
    return tests, result


def test_the_starter_fails_and_the_reference_passes_through_the_real_grader(
    live_client: TestClient,
) -> None:
    tests, failing = graded(live_client, (FOLDER / "starter.py").read_text(), "submit")
    assert failing["verdict"] == "failed" and failing["score"] < 100
    assert tests and [t["name"] for t in tests] == [t["name"] for t in failing["tests"]]
    assert any(t["hidden"] for t in failing["tests"])
    assert any(t["status"] in ("error", "fail") for t in failing["tests"])

    tests, visible = graded(live_client, (FOLDER / "reference.py").read_text(), "run")
    assert visible["verdict"] == "passed" and visible["mode"] == "run"
    assert tests and not any(t["hidden"] for t in visible["tests"])

    _, passing = graded(live_client, (FOLDER / "reference.py").read_text(), "submit")
    assert passing["verdict"] == "passed" and passing["score"] == 100.0
    assert passing["device"] and passing["wall_ms"] is not None
    listed = {e["slug"]: e["status"] for e in live_client.get("/api/exercises").json()}
    assert listed[SLUG] == "solved"
