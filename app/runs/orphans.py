"""Runs a crashed web process left behind. Each run records the process that drives it
(host, pid and that pid's start time, so a reused pid is not mistaken for it); the unfinished
runs of processes on this host that are gone end as `internal_error`, at start-up and then
every few seconds (a process may die while this one runs, or still be dying when it starts).
Their event streams then send that result and end."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.models import Run, utcnow

log = logging.getLogger(__name__)

RESTARTED = (
    "The server restarted during this run, so it was stopped; its output is lost. Run it again."
)
SWEEP_SECONDS = 3.0  # how often a running server looks for runs whose driver is gone
UNFINISHED = ("queued", "running")
# A zombie (Z) has exited and only waits for its parent to read its status; a dead one (X,
# x on old kernels) is being torn down. Neither will drive a run again, though /proc still
# shows each with its pid and start time.
GONE_STATES = frozenset("ZXx")


@dataclass(frozen=True)
class ProcessStat:
    state: str  # field 3 of /proc/PID/stat: R, S, D, Z, X…
    start_time: str  # field 22: clock ticks since boot


def process_stat(pid: int) -> ProcessStat | None:
    """The process's state and start time; None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat.rsplit(")", 1)[1].split()
    return ProcessStat(state=fields[0], start_time=fields[19])


@cache
def driver_id() -> str:
    """This process, as runs record their driver: 'host:pid:start'."""
    pid = os.getpid()
    stat = process_stat(pid)
    return f"{socket.gethostname()}:{pid}:{stat.start_time if stat else '?'}"


def alive(driver: str) -> bool:
    """Whether the process `driver` names still runs (only answerable on its own host): not
    when its pid is free, now names another process (a different start time), or names a
    process that has exited but not been reaped."""
    host, _, rest = driver.partition(":")
    if host != socket.gethostname():
        return True  # another machine's: not ours to judge
    pid, _, start = rest.partition(":")
    if not pid.isdigit():
        return False
    stat = process_stat(int(pid))
    return stat is not None and stat.start_time == start and stat.state not in GONE_STATES


def end_orphans(engine: Engine) -> int:
    """End the unfinished runs whose driver is gone; how many there were. A compare-and-set:
    a run that ends otherwise meanwhile keeps its own outcome."""
    with Session(engine) as session:
        unfinished = session.exec(
            select(Run.id, Run.driver).where(col(Run.status).in_(UNFINISHED))
        ).all()
        orphans = [run_id for run_id, driver in unfinished if not driver or not alive(driver)]
        if not orphans:
            return 0
        statement = (
            update(Run)
            .where(col(Run.id).in_(orphans), col(Run.status).in_(UNFINISHED))
            .values(
                status="done",
                verdict="internal_error",
                detail=RESTARTED,
                finished_at=utcnow(),
            )
        )
        ended = session.connection().execute(statement).rowcount
        session.commit()
    return ended


async def sweep_forever(engine: Engine) -> None:
    """End orphans every SWEEP_SECONDS while the server runs. A failed pass (the database
    busy or away) is logged and tried again next time: the loop itself never stops."""
    while True:
        await asyncio.sleep(SWEEP_SECONDS)
        try:
            ended = await asyncio.to_thread(end_orphans, engine)
        except Exception:
            log.exception("could not look for runs whose server process is gone")
            continue
        if ended:
            log.warning("ended %d runs whose server process is gone", ended)
