"""Runs a stopped web process left unfinished end as internal_error when another starts, and
while it runs (app/runs/orphans.py), and their streams end; runs of a live process are
left alone. A process that has exited but was not reaped (a zombie), or a pid now used by
another process, counts as gone."""

from __future__ import annotations

import asyncio
import hashlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.admin.fleet import FleetKeeper
from app.main import create_app
from app.models import Run
from app.runs import orphans
from app.runs.orphans import alive, driver_id, end_orphans, process_stat
from app.settings import Settings
from tests.support.aio import run_async
from tests.support.runs import events_of


def a_run(engine: Engine, run_id: str, *, driver: str, status: str = "running") -> None:
    with Session(engine) as session:
        session.add(
            Run(
                id=run_id,
                visitor="v",
                token_sha256=None,
                driver=driver,
                code_sha256="0" * 64,
                code_bytes=1,
                backend_requested="cpu",
                status=status,
            )
        )
        session.commit()


def dead_driver() -> str:
    """A process of this host that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return f"{socket.gethostname()}:{child.pid}:12345"


def test_runs_of_gone_processes_end_and_live_ones_stay(engine: Engine) -> None:
    a_run(engine, "orphan", driver=dead_driver())
    a_run(engine, "legacy", driver="", status="queued")  # from before drivers were recorded
    a_run(engine, "alive", driver=driver_id())
    a_run(engine, "elsewhere", driver="another-host:1:1")
    assert end_orphans(engine) == 2
    with Session(engine) as session:
        orphan = session.get(Run, "orphan")
        assert orphan is not None and orphan.status == "done"
        assert orphan.verdict == "internal_error" and "restarted" in orphan.detail
        assert session.get(Run, "legacy").verdict == "internal_error"  # type: ignore[union-attr]
        assert session.get(Run, "alive").status == "running"  # type: ignore[union-attr]
        assert session.get(Run, "elsewhere").status == "running"  # type: ignore[union-attr]


def driver_of(pid: int) -> str:
    stat = process_stat(pid)
    assert stat is not None
    return f"{socket.gethostname()}:{pid}:{stat.start_time}"


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield child
    child.kill()
    child.wait()


def test_a_running_process_is_alive(sleeper: subprocess.Popen[bytes]) -> None:
    assert alive(driver_of(sleeper.pid)) and alive(driver_id())


def test_a_zombie_is_gone_though_proc_still_shows_its_start_time(
    sleeper: subprocess.Popen[bytes],
) -> None:
    driver = driver_of(sleeper.pid)
    os.kill(sleeper.pid, 9)  # dead, and not reaped: this test is its parent and waits later
    deadline = time.monotonic() + 10
    while (stat := process_stat(sleeper.pid)) is not None and stat.state != "Z":
        assert time.monotonic() < deadline, "the killed child never became a zombie"
        time.sleep(0.01)
    assert stat is not None and driver == driver_of(sleeper.pid)  # same pid, same start
    assert not alive(driver)


def test_a_reused_pid_is_not_the_process_that_drove_the_run(
    sleeper: subprocess.Popen[bytes],
) -> None:
    _, pid, start = driver_of(sleeper.pid).split(":")
    # The pid runs a process again, but one that started at another time.
    assert not alive(f"{socket.gethostname()}:{pid}:{int(start) + 1}")
    assert not alive(f"{socket.gethostname()}:not-a-pid:1")


def test_driver_id_names_this_process() -> None:
    host, pid, start = driver_id().split(":")
    assert host == socket.gethostname() and int(pid) == os.getpid() and start.isdigit()


def test_after_a_restart_the_left_run_ends_and_its_stream_closes(
    settings: Settings, engine: Engine
) -> None:
    a_run(engine, "leftover", driver=dead_driver())
    with Session(engine) as session:
        run = session.get(Run, "leftover")
        assert run is not None
        run.token_sha256 = hashlib.sha256(b"tok").hexdigest()
        session.add(run)
        session.commit()
    with TestClient(create_app(settings)) as client:  # start-up ends it
        events = events_of(client, "leftover", headers={"X-Run-Token": "tok"})
    assert events == [("result", events[0][1])]
    assert events[0][1]["verdict"] == "internal_error" and "restarted" in events[0][1]["detail"]


def test_a_running_server_ends_runs_whose_process_dies_later(
    settings: Settings, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(orphans, "SWEEP_SECONDS", 0.1)
    calls = 0
    real = orphans.end_orphans

    def failing_once(engine: Engine) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("the database is away")  # the sweep goes on regardless
        return real(engine)

    monkeypatch.setattr(orphans, "end_orphans", failing_once)
    with TestClient(create_app(settings)):
        a_run(engine, "later", driver=dead_driver())
        a_run(engine, "mine", driver=driver_id())
        deadline = time.monotonic() + 10
        while True:
            with Session(engine) as session:
                later = session.get(Run, "later")
                assert later is not None
                if later.status == "done":
                    break
            assert time.monotonic() < deadline, "the sweep never ended the orphan"
            time.sleep(0.05)
        assert later.verdict == "internal_error" and calls >= 2
        with Session(engine) as session:
            assert session.get(Run, "mine").status == "running"  # type: ignore[union-attr]


def test_the_fleets_keeper_goes_on_after_any_failed_pass(engine: Engine) -> None:
    """On the fleet, FleetKeeper ends runs whose machine is gone; a pass that fails (here the
    database) must not end the loop, or such runs would stay running for good."""
    passes: list[str] = []

    class Keeper(FleetKeeper):
        async def once(self) -> tuple[int, int]:
            passes.append("pass")
            if len(passes) == 1:
                raise RuntimeError("the database is away")
            return 0, 0

    queue = SimpleNamespace(timing=SimpleNamespace(heartbeat_seconds=0.01))

    async def three_passes() -> None:
        task = asyncio.create_task(Keeper(engine, queue).run_forever())  # type: ignore[arg-type]
        while len(passes) < 3:
            assert not task.done(), "the keeper's loop ended"
            await asyncio.sleep(0.01)
        task.cancel()

    run_async(asyncio.wait_for(three_passes(), 10))
