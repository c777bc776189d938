"""The fleet as it is deployed, on one machine: PostgreSQL, redis-server, two uvicorn web
processes (each with its own DATA_DIR, sharing only the database and Redis) and two runner
agents: one in front of the real sandbox worker (the cpu pool), one playing scripted runs
(the cuda pool, so that no GPU is needed). A run sent to one replica streams from the other,
and a browser whose replica dies resumes on the other without losing or repeating output."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from sqlalchemy.engine import Engine

from tests.scaleout.conftest import HEARTBEAT, LEASE, Agents
from tests.support.processes import start_web
from tests.support.redis_server import RedisServer
from tests.support.runs import Frame, sse_frames
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytest_plugins = ["tests.support.postgres"]


@dataclass
class Replica:
    process: subprocess.Popen[bytes]
    url: str

    def client(self) -> httpx2.Client:
        return httpx2.Client(base_url=self.url, timeout=30)


def start_replica(database_url: str, redis_url: str, base: Path) -> Replica:
    """A web process of the fleet, with a DATA_DIR of its own: nothing local is shared."""
    env = {
        "DATABASE_URL": database_url,
        "RUN_QUEUE": "redis",
        "REDIS_URL": redis_url,
        "SECRET_KEY": "the-same-key-on-every-replica-of-this-test",
        "SANDBOX_AUTOSTART": "false",
        "IMPORT_ON_START": "false",
        "FLEET_HEARTBEAT_SECONDS": str(HEARTBEAT),
        "FLEET_LEASE_SECONDS": str(LEASE),
        "RUNS_PER_MINUTE": "1000",
        "RUNS_PER_MINUTE_PER_CLIENT": "1000",
        "CONCURRENT_RUNS": "100",
        "CONCURRENT_RUNS_PER_CLIENT": "100",
        "LOG_FORMAT": "json",
    }
    return Replica(*start_web(env, base, timeout_seconds=90))


@pytest.fixture
def fleet(
    postgres_engine: Engine,
    redis_server: RedisServer,
    agents: Agents,
    worker: WorkerHandle,
    tmp_path: Path,
) -> Iterator[list[Replica]]:
    url = postgres_engine.url.render_as_string(hide_password=False)
    replicas: list[Replica] = []
    try:
        for name in ("a", "b"):
            replicas.append(start_replica(url, redis_server.url, tmp_path / name))
        agents("cuda", executor="fake")
        agents("cpu", executor="socket", socket_path=worker.socket_path, slots=2)
        yield replicas
    finally:
        for replica in replicas:
            if replica.process.poll() is None:
                replica.process.terminate()
                replica.process.wait(timeout=20)


def submit(replica: Replica, code: str, backend: str) -> tuple[str, dict[str, str]]:
    with replica.client() as client:
        response = client.post("/api/runs", json={"code": code, "backend": backend})
    assert response.status_code == 202, response.text
    body = response.json()
    return body["id"], {"X-Run-Token": body["token"]}


def read_events(
    replica: Replica,
    run_id: str,
    headers: dict[str, str],
    *,
    stop_after_output: int | None = None,
) -> list[Frame]:
    """(id, event, data) of each frame, until the result (or `stop_after_output` frames of
    output, to leave the stream as a browser whose server died would)."""
    found: list[Frame] = []
    with (
        replica.client() as client,
        client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response,
    ):
        assert response.status_code == 200
        for frame in sse_frames(response.iter_lines()):
            found.append(frame)
            outputs = sum(1 for _, kind, _ in found if kind == "stdout")
            if stop_after_output is not None and outputs >= stop_after_output:
                break
    return found


def stdout_of(frames: list[Frame]) -> str:
    return "".join(data["data"] for _, kind, data in frames if kind == "stdout")


def test_a_run_sent_to_one_replica_streams_from_the_other(fleet: list[Replica]) -> None:
    first, second = fleet
    run_id, owner = submit(first, "print('from the fleet')", backend="cuda")
    frames = read_events(second, run_id, owner)
    assert stdout_of(frames) == "from the fleet\n"
    _, kind, result = frames[-1]
    assert kind == "result" and result["verdict"] == "ok" and result["backend"] == "cuda"
    with first.client() as client:  # and the first replica reads the same stored run
        assert client.get(f"/api/runs/{run_id}", headers=owner).json()["verdict"] == "ok"


@needs_isolation
def test_a_browser_resumes_on_the_other_replica_when_its_replica_dies(fleet: list[Replica]) -> None:
    first, second = fleet
    code = "import time\nfor i in range(8):\n    print(i, flush=True)\n    time.sleep(0.4)\n"
    run_id, owner = submit(first, code, backend="cpu")
    before = read_events(first, run_id, owner, stop_after_output=2)
    last_id = next(event_id for event_id, _, _ in reversed(before) if event_id)
    os.kill(first.process.pid, signal.SIGKILL)  # mid-stream, as a crashed server would
    first.process.wait()
    after = read_events(second, run_id, {**owner, "Last-Event-ID": last_id})
    assert stdout_of(before) + stdout_of(after) == "".join(f"{i}\n" for i in range(8))
    _, kind, result = after[-1]
    assert kind == "result" and result["verdict"] == "ok" and result["backend"] == "cpu"
