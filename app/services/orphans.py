"""Runs a crashed web process left behind. Each run records the process that drives it
(host, pid and that pid's start time, so a reused pid is not mistaken for it); a process
starting up ends, as `internal_error`, the unfinished runs of processes on its host that are
gone. Their event streams then send that result and end."""

from __future__ import annotations

import os
import socket
from functools import cache
from pathlib import Path

from sqlalchemy import or_
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.models import Run, utcnow

RESTARTED = (
    "The server restarted during this run, so it was stopped; its output is lost. Run it again."
)


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    return stat.rsplit(")", 1)[1].split()[19]


@cache
def driver_id() -> str:
    """This process, as runs record their driver: 'host:pid:start'."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_start_time(pid) or '?'}"


def _alive(driver: str) -> bool:
    """Whether the process `driver` names still runs (only answerable on its own host)."""
    host, _, rest = driver.partition(":")
    if host != socket.gethostname():
        return True  # another machine's: not ours to judge
    pid, _, start = rest.partition(":")
    return pid.isdigit() and _start_time(int(pid)) == start


def end_orphans(engine: Engine) -> int:
    """End the unfinished runs whose driver is gone; how many there were."""
    with Session(engine) as session:
        unfinished = session.exec(
            select(Run).where(or_(col(Run.status) == "queued", col(Run.status) == "running"))
        ).all()
        orphans = [run for run in unfinished if not run.driver or not _alive(run.driver)]
        for run in orphans:
            run.status, run.verdict, run.detail = "done", "internal_error", RESTARTED
            run.finished_at = utcnow()
            session.add(run)
        session.commit()
        return len(orphans)
