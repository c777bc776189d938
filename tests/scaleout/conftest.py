"""Fixtures of the fleet's tests: a real redis-server per test, the app with RUN_QUEUE=redis
over it (short heartbeats and leases), and runner agents as real processes."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.main import create_app
from app.models import Run
from app.runqueue.fleet import keys
from app.settings import RunQueueKind, Settings
from tests.support.redis_server import RedisServer, start_agent, stop_process


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here starts servers and processes: `-m "not fleet"` skips them locally."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.fleet)


HEARTBEAT = 0.2
LEASE = 1.0


@pytest.fixture
def fleet_settings(settings: Settings, redis_server: RedisServer) -> Settings:
    return settings.model_copy(
        update={
            "run_queue": RunQueueKind.redis,
            "redis_url": redis_server.url,
            "fleet_heartbeat_seconds": HEARTBEAT,
            "fleet_lease_seconds": LEASE,
            "fleet_events_ttl_seconds": 60,
            # One test client stands for many learners here: the per-person caps are not
            # what these tests are about.
            "concurrent_runs": 100,
            "concurrent_runs_per_client": 100,
            "runs_per_minute": 1000,
            "runs_per_minute_per_client": 1000,
        }
    )


@pytest.fixture
def fleet_client(fleet_settings: Settings) -> Iterator[TestClient]:
    """An API client without cookies: each run is owned through its token."""
    with TestClient(create_app(fleet_settings)) as client:
        yield client


Agents = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def agents(redis_server: RedisServer, tmp_path: Path) -> Iterator[Agents]:
    """Start an agent process (options as tests/support/redis_server.start_agent) and wait
    until its heartbeat says it is ready; all are ended after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(pool: str = "cpu", **options: Any) -> subprocess.Popen[bytes]:
        log = tmp_path / f"agent-{len(started)}.log"
        process = start_agent(
            redis_server.url, log, pool=pool, heartbeat=HEARTBEAT, lease=LEASE, **options
        )
        started.append(process)
        wait_until(
            lambda: agent_ready(redis_server, process, pool),
            f"agent {process.pid} to be ready: {log.read_text() if log.exists() else ''}",
            timeout=30,
        )
        return process

    yield start
    for process in started:
        stop_process(process)


def agent_ready(server: RedisServer, process: subprocess.Popen[bytes], pool: str = "cpu") -> bool:
    """Whether the agent `process` has a live heartbeat in `pool` saying it is ready."""
    client = server.client()
    return any(
        f":{process.pid}:" in name and '"ready": true' in (client.get(name) or "")
        for name in client.scan_iter(keys.agents(pool))
    )


def wait_until(check: Callable[[], object], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def stored(engine: Engine, run_id: str) -> Run:
    with Session(engine) as session:
        run = session.get(Run, run_id)
    assert run is not None
    return run


def submit(client: TestClient, code: str, backend: str = "cpu") -> tuple[str, dict[str, str]]:
    """Start a run as a cookie-less client; its id and the headers that own it."""
    client.cookies.clear()
    response = client.post("/api/runs", json={"code": code, "backend": backend})
    assert response.status_code == 202, response.text
    body = response.json()
    return body["id"], {"X-Run-Token": body["token"]}


def wait_done(engine: Engine, run_id: str, timeout: float = 15.0) -> Run:
    wait_until(lambda: stored(engine, run_id).status == "done", f"run {run_id} to end", timeout)
    return stored(engine, run_id)
