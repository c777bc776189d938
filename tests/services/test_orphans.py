"""Runs a stopped web process left unfinished end as internal_error when another starts
(app/services/orphans.py), and their streams end; runs of a live process are left alone."""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.main import create_app
from app.models import Run
from app.services.orphans import driver_id, end_orphans
from app.settings import Settings
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
