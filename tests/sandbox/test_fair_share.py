"""Fair share of the sandbox, end to end: a web process and a real 2-slot worker, and
clients on different loopback addresses (127.0.0.2 is another client to the server, as
another machine would be). One client keeps the worker as busy as its limits allow; a
newcomer's trivial run still finishes within seconds, and goes ahead of the busy client's
queued runs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.support import databases
from tests.support.processes import start_web
from tests.support.sandbox_worker import WorkerHandle, needs_isolation, running_worker

pytestmark = needs_isolation

SLEEPER = "import time\ntime.sleep({seconds})\nprint('slept')"
NEWCOMER_SECONDS = 5.0  # "within a few seconds": a trivial run takes well under one alone


@pytest.fixture(scope="module")
def two_slot_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerHandle]:
    """A worker of its own (its slots are held for long here), with two CPU slots."""
    with running_worker(tmp_path_factory.mktemp("fair-worker"), "--cpu-slots", "2") as handle:
        yield handle


@pytest.fixture
def server(
    two_slot_worker: WorkerHandle, imported_db_template: str, tmp_path: Path
) -> Iterator[str]:
    """The app as a process of its own over the worker, listening on 127.0.0.1."""
    with databases.copy_of(imported_db_template, tmp_path) as url:
        env = {
            "DATABASE_URL": url,
            "RUN_QUEUE": "local",
            "SANDBOX_SOCKET": str(two_slot_worker.socket_path),
            "SECRET_KEY": "fair-share-test",
            "CONCURRENT_RUNS": "4",  # the busy client may hold as many as its address may
        }
        process, base = start_web(env, tmp_path / "web")
        try:
            yield base
        finally:
            process.terminate()
            process.wait(timeout=30)


def client_at(base: str, address: str) -> httpx2.Client:
    """A cookie-less API client whose requests come from `address`."""
    transport = httpx2.HTTPTransport(local_address=address)
    return httpx2.Client(base_url=base, transport=transport, timeout=30)


def start(client: httpx2.Client, code: str) -> dict[str, str]:
    response = client.post("/api/runs", json={"code": code, "backend": "cpu"})
    assert response.status_code == 202, response.text
    started: dict[str, str] = response.json()
    return started


def stored(client: httpx2.Client, run: dict[str, str]) -> dict[str, object]:
    response = client.get(f"/api/runs/{run['id']}", headers={"X-Run-Token": run["token"]})
    assert response.status_code == 200, response.text
    body: dict[str, object] = response.json()
    return body


def wait_for(client: httpx2.Client, run: dict[str, str], status: str, timeout: float) -> float:
    """Seconds until the run has `status`; fails after `timeout`."""
    began = time.monotonic()
    while stored(client, run)["status"] != status:
        assert time.monotonic() - began < timeout, f"run {run['id']} not {status} in {timeout} s"
        time.sleep(0.05)
    return time.monotonic() - began


def cancel_all(client: httpx2.Client, runs: list[dict[str, str]]) -> None:
    """Cancel the runs and wait until they have ended: the worker is free for the next test."""
    for run in runs:
        client.post(f"/api/runs/{run['id']}/cancel", headers={"X-Run-Token": run["token"]})
    for run in runs:
        wait_for(client, run, "done", timeout=30)


def test_a_newcomers_run_finishes_in_seconds_beside_a_client_holding_the_worker(
    server: str,
) -> None:
    with client_at(server, "127.0.0.1") as busy, client_at(server, "127.0.0.2") as newcomer:
        held = [start(busy, SLEEPER.format(seconds=60)) for _ in range(4)]
        try:
            wait_for(busy, held[0], "running", timeout=30)
            time.sleep(0.5)  # time enough for a second run of its to start, were it let
            began = time.monotonic()
            run = start(newcomer, "print('hi')")
            wait_for(newcomer, run, "done", timeout=30)
            seconds = time.monotonic() - began
            result = stored(newcomer, run)
            assert (result["verdict"], result["stdout"]) == ("ok", "hi\n")
            assert seconds < NEWCOMER_SECONDS, f"the newcomer waited {seconds:.1f} s"
            statuses = [stored(busy, h)["status"] for h in held]
            # All but one slot for one owner: the other slot stays free for whoever comes.
            assert sorted(statuses) == ["queued", "queued", "queued", "running"]
        finally:
            cancel_all(busy, held)


def test_a_newcomer_goes_ahead_of_the_runs_a_busy_client_queued_first(server: str) -> None:
    with (
        client_at(server, "127.0.0.1") as busy,
        client_at(server, "127.0.0.3") as other,
        client_at(server, "127.0.0.2") as newcomer,
    ):
        held = [start(busy, SLEEPER.format(seconds=3)) for _ in range(4)]
        beside = start(other, SLEEPER.format(seconds=60))  # holds the other slot
        try:
            wait_for(busy, held[0], "running", timeout=30)
            wait_for(other, beside, "running", timeout=30)
            run = start(newcomer, "print('hi')")
            wait_for(newcomer, run, "done", timeout=30)  # when the busy client's first ends
            assert [stored(busy, h)["status"] for h in held[1:]].count("done") == 0
            result = stored(newcomer, run)
            assert (result["verdict"], result["stdout"]) == ("ok", "hi\n")
        finally:
            cancel_all(busy, held)
            cancel_all(other, [beside])
