"""Runs: the rules for starting one, who may see it, and recording how it went.

How a run reaches a worker and how its events come back is the run queue's business
(app/runqueue); this module holds the database side and the policy: what is accepted, how
many a person may have going, who owns a run, and what its outcome counts for."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.domain import LearnerScope, RunNotFound, RunRejected, SandboxBusy
from app.models import Item, Run, utcnow
from app.runqueue import QueueRefused, RunQueue
from app.services import study
from app.services.ratelimit import RunLimiter
from sandbox.protocol import (
    Backend,
    Event,
    Finished,
    Limits,
    Output,
    RunRequest,
    RunResult,
    Verdict,
    check_code,
)

FOLLOW_POLL_SECONDS = 0.25
# RunResult fields that the run's row keeps.
_OUTCOME_FIELDS = (
    "verdict",
    "exit_code",
    "stdout",
    "stderr",
    "detail",
    "truncated",
    "wall_ms",
    "cpu_ms",
    "max_memory_mb",
    "backend",
    "device",
)


@dataclass(frozen=True)
class RunOrigin:
    """Who starts a run and where its code came from."""

    owner: str  # what limits count against (Identity.owner_key); kept as the run's `visitor`
    learner_id: int | None = None
    item_id: int | None = None
    sample_index: int | None = None


class RunRecorder:
    """Writes each run's start and outcome as the queue reports them (the RunObserver of
    app/runqueue), in a worker thread so the event loop never waits on the database."""

    def __init__(self, engine: Engine, limiter: RunLimiter) -> None:
        self.engine = engine
        self.limiter = limiter

    async def started(self, run_id: str, backend: str, device: str) -> None:
        fields = {"status": "running", "backend": backend, "device": device}
        await asyncio.to_thread(self._update, run_id, fields)

    async def finished(self, run_id: str, result: RunResult) -> None:
        outcome = {k: v for k, v in result.to_json().items() if k in _OUTCOME_FIELDS}
        owner = await asyncio.to_thread(self._record_outcome, run_id, outcome)
        if owner is not None:
            self.limiter.finished(owner)

    def _update(self, run_id: str, fields: dict[str, Any]) -> None:
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None:
                return
            for key, value in fields.items():
                setattr(run, key, value)
            session.add(run)
            session.commit()

    def _record_outcome(self, run_id: str, outcome: dict[str, Any]) -> str | None:
        """Store the outcome and count it as practice, in one transaction; the run's owner
        key (None when the run is unknown or had already ended)."""
        with Session(self.engine) as session:
            run = session.get(Run, run_id)
            if run is None or run.status == "done":
                return None
            for key, value in outcome.items():
                setattr(run, key, value)
            run.status, run.finished_at = "done", utcnow()
            session.add(run)
            _count_practice(session, run)
            session.commit()
            return run.visitor


async def submit(
    engine: Engine,
    queue: RunQueue,
    limiter: RunLimiter,
    *,
    code: object,
    backend: str,
    origin: RunOrigin,
) -> Run:
    """Check, admit and queue a run; return it once a worker has accepted it."""
    problem = check_code(code)
    if problem:
        raise RunRejected(f"Rejected: {problem}.")
    assert isinstance(code, str)
    if backend not in {b.value for b in Backend}:
        raise RunRejected(f"Rejected: unknown backend '{backend}' (use cpu, cuda or auto).")
    limiter.admit(origin.owner)
    encoded = code.encode()
    run = Run(
        id=secrets.token_hex(16),
        visitor=origin.owner,
        learner_id=origin.learner_id,
        item_id=origin.item_id,
        sample_index=origin.sample_index,
        code_sha256=hashlib.sha256(encoded).hexdigest(),
        code_bytes=len(encoded),
        backend_requested=backend,
    )
    try:
        await asyncio.to_thread(_insert, engine, run)
        request = RunRequest(id=run.id, code=code, backend=Backend(backend), limits=Limits())
        await queue.submit(request)
    except QueueRefused as exc:
        raise SandboxBusy(exc.detail, exc.retry_after_seconds) from None
    except BaseException:
        limiter.finished(origin.owner)
        raise
    return run


def _insert(engine: Engine, run: Run) -> None:
    with Session(engine, expire_on_commit=False) as session:
        session.add(run)
        session.commit()


def get(engine: Engine, run_id: str) -> Run:
    with Session(engine) as session:
        run = session.get(Run, run_id)
    if run is None:
        raise RunNotFound(run_id)
    return run


def owned(engine: Engine, scope: LearnerScope | None, run_id: str) -> Run:
    """The run, if it is this learner's; anyone else gets the same answer as for no run."""
    run = get(engine, run_id)
    if scope is None or run.learner_id != scope.learner_id:
        raise RunNotFound(run_id)
    return run


async def follow(engine: Engine, queue: RunQueue, run_id: str) -> AsyncIterator[Event]:
    """Every event of the run from its start, live while this process carries it, ending
    with Finished; for a run it does not carry, the stored output and result (following
    the database until the run ends, when another process drives it)."""
    live = queue.events(run_id)
    if live is not None:
        async for event in live:
            yield event
        return
    run = get(engine, run_id)
    while run.status != "done":
        await asyncio.sleep(FOLLOW_POLL_SECONDS)
        run = get(engine, run_id)
    if run.stdout:
        yield Output("stdout", run.stdout)
    if run.stderr:
        yield Output("stderr", run.stderr)
    yield Finished(stored_result(run))


def stored_result(run: Run) -> RunResult:
    """The outcome kept in a run's row, in the sandbox's terms."""
    return RunResult(
        id=run.id,
        verdict=Verdict(run.verdict or Verdict.INTERNAL_ERROR),
        exit_code=run.exit_code,
        stdout=run.stdout,
        stderr=run.stderr,
        wall_ms=run.wall_ms or 0,
        backend=run.backend or "",
        device=run.device or "",
        detail=run.detail,
        cpu_ms=run.cpu_ms,
        max_memory_mb=run.max_memory_mb,
        truncated=run.truncated,
    )


def _count_practice(session: Session, run: Run) -> None:
    """A finished run is practice for its learner, and on its item when it had one. Runs
    that never started (refused, or our own failure) are not the learner's doing."""
    if run.learner_id is None:
        return
    if run.verdict in (Verdict.REJECTED.value, Verdict.INTERNAL_ERROR.value):
        return
    item = session.get(Item, run.item_id) if run.item_id else None
    study.record_run(
        LearnerScope(session, run.learner_id), item, ok=run.verdict == Verdict.OK.value
    )
