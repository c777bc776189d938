"""Keeping Redis in line with the database, for RUN_QUEUE=redis (app/runqueue/fleet).

The database is the source of truth for runs; Redis only carries them. Every web replica,
every heartbeat, makes Redis agree with it:
  - each `queued` run older than a moment has a job in its pool's stream (after a restart
    or a wipe of Redis, the streams are rebuilt from these rows). Adding a job is
    idempotent in Redis, so replicas doing this at once add one job, not several;
  - each `running` run is held by a live delivery (its claim, renewed by its agent). One
    whose claim has been missing for a whole lease lost its machine: it ends
    `internal_error` and is not run again. Waiting a lease lets the agents of a live run
    set their claims again after a wipe.
Both writes are compare-and-sets on the run's row, so replicas that race agree."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime, timedelta
from pathlib import Path

from redis.exceptions import RedisError
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.domain import NotFound
from app.exercises.catalogue import grading_request
from app.models import Run, utcnow
from app.runqueue.fleet.queue import RedisRunQueue
from app.runs.runs import request_for
from app.settings import PROJECT_ROOT
from sandbox.protocol import RunRequest

log = logging.getLogger(__name__)


class FleetKeeper:
    """One replica's side of the rebuild and of the search for runs whose machine is gone."""

    def __init__(
        self, engine: Engine, queue: RedisRunQueue, content_dir: Path = PROJECT_ROOT / "content"
    ) -> None:
        self.engine = engine
        self.queue = queue
        self.content_dir = content_dir  # where a queued submission's grading is read again
        self.unheld_since: dict[str, float] = {}  # running run → when its claim was first missed
        self.forgot_at = 0.0  # when gone consumers were last looked for

    async def run_forever(self) -> None:
        """A pass every heartbeat. A failed pass is logged and tried again at the next one,
        whatever failed (Redis, or the database busy or away): were this loop to end, runs
        whose machine is gone would stay `running` for good."""
        while True:
            try:
                await self.once()
            except (RedisError, OSError) as exc:
                log.warning("the fleet's queue could not be checked: %s", exc)
            except Exception:
                log.exception("the fleet's runs could not be checked")
            await asyncio.sleep(self.queue.timing.heartbeat_seconds)

    async def once(self) -> tuple[int, int]:
        """One pass; (jobs added back, runs ended for a lost machine)."""
        # Gone consumers are looked for once a lease: they count as gone only after ten.
        now = time.monotonic()
        forget_idle = now - self.forgot_at >= self.queue.timing.lease_seconds
        await self.queue.ensure_groups(forget_idle=forget_idle)
        if forget_idle:
            self.forgot_at = now
        grace = timedelta(seconds=self.queue.timing.heartbeat_seconds)
        queued, running = await asyncio.to_thread(
            _unfinished, self.engine, utcnow() - grace, self.content_dir
        )
        added = await self.queue.restore(queued)
        if added:
            log.warning("added %d queued runs back to the job streams", added)
        return added, await self._end_lost(running)

    async def _end_lost(self, running: list[str]) -> int:
        now = time.monotonic()
        held = await self.queue.held(running)
        unheld = {run_id: self.unheld_since.get(run_id, now) for run_id in running}
        self.unheld_since = {r: t for r, t in unheld.items() if r not in held}
        lost = [
            r for r, t in self.unheld_since.items() if now - t >= self.queue.timing.lease_seconds
        ]
        for run_id in lost:
            log.warning("run %s lost its machine: ended, not run again", run_id)
            await self.queue.abandon(run_id)
            self.unheld_since.pop(run_id, None)
        return len(lost)


def _unfinished(
    engine: Engine, queued_before: datetime, content_dir: Path
) -> tuple[list[RunRequest], list[str]]:
    """Runs queued before `queued_before`, as requests (a submission with its grading read
    again from the content folder); and the ids of running runs."""
    waiting = (col(Run.status) == "queued") & (col(Run.created_at) < queued_before)
    with Session(engine) as session:
        queued = session.exec(select(Run).where(waiting)).all()
        running = session.exec(select(Run.id).where(col(Run.status) == "running")).all()
        requests = [r for r in (_request(run, content_dir) for run in queued) if r is not None]
    return requests, list(running)


def _request(run: Run, content_dir: Path) -> RunRequest | None:
    if run.exercise_slug is None:
        return request_for(run)
    try:
        grading = grading_request(content_dir, run.exercise_slug, run.grading_mode or "submit")
    except (NotFound, OSError, ValueError):
        # Never sent ungraded: a submission whose exercise is gone waits for the sweep.
        log.warning("run %s: exercise %s is gone; not queued again", run.id, run.exercise_slug)
        return None
    return request_for(run, grading)
