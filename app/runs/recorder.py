"""Recording how runs go: each start and outcome the run queue reports, written by
compare-and-set on the run's row (whichever of several deliveries or replicas reports it),
with the features' part in a run's end (practice, re-solving, lab measurements) in the same
transaction."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app import logs, metrics
from app.models import Run, utcnow
from sandbox.protocol import GradingReport, RunResult

log = logging.getLogger("backprop.runs")

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

# A feature's part in a run's end: called once per run, inside the transaction that stores
# its outcome (not committed by the listener).
RunEnded = Callable[[Session, Run], object]


def graded_outcome(report: GradingReport) -> dict[str, Any]:
    """The run columns a submission's grading fills: its verdict, score and whole report."""
    return {
        "grading_verdict": report.verdict.value,
        "score": report.score,
        "grading": json.dumps(report.to_json()).replace("\\u0000", "\\ufffd"),
    }


class RunRecorder:
    """Writes each run's start and outcome as the queue reports them (the RunObserver of
    app/runqueue), in a worker thread so the event loop never waits on the database."""

    def __init__(self, engine: Engine, *, on_end: Sequence[RunEnded]) -> None:
        self.engine = engine
        # What the features above the runs make of a run that ended, each in the same
        # transaction as the outcome (app/main.py wires them: RUN_ENDED). Required, so that
        # a recorder without them is a choice (a test of the recording alone), not a slip.
        self.on_end = tuple(on_end)

    async def started(
        self, run_id: str, backend: str, device: str, attempt: int = 1, delivery: str = ""
    ) -> bool:
        return await asyncio.to_thread(
            self._record_start, run_id, backend, device, attempt, delivery
        )

    async def unstarted(self, run_id: str, delivery: str) -> bool:
        return await asyncio.to_thread(self._record_unstart, run_id, delivery)

    async def finished(self, run_id: str, result: RunResult, attempt: int | None = None) -> bool:
        outcome = {k: _storable(v) for k, v in result.to_json().items() if k in _OUTCOME_FIELDS}
        if result.grading is not None:  # a submission: the grader's findings too
            outcome.update(graded_outcome(result.grading))
        recorded = await asyncio.to_thread(self._record_outcome, run_id, outcome, attempt)
        if recorded:  # counted once, however many deliveries report an end
            verdict = result.verdict.value
            metrics.RUN_VERDICTS.labels(verdict).inc()
            if result.wall_ms is not None:
                metrics.RUN_SECONDS.labels(result.backend or "none", verdict).observe(
                    result.wall_ms / 1000
                )
            with logs.bound(run_id=run_id):
                ended = {"verdict": verdict, "backend": result.backend, "wall_ms": result.wall_ms}
                log.info("run ended: %s", verdict, extra=ended)
        return recorded

    def _record_start(
        self, run_id: str, backend: str, device: str, attempt: int, delivery: str
    ) -> bool:
        """Compare-and-set: only a waiting run starts, and only once, whichever delivery
        (`attempt`) gets here first. The delivery that started it (named by `delivery`) is
        told yes again when it asks again, and may fill in its device."""
        start = (
            update(Run)
            .where(col(Run.id) == run_id, col(Run.status) == "queued")
            .values(
                status="running",
                backend=backend,
                device=device,
                attempt=attempt,
                delivery=delivery or None,
                started_at=utcnow(),
            )
        )
        with Session(self.engine) as session:
            changed = session.connection().execute(start).rowcount
            if not changed and delivery:
                again = update(Run).where(
                    col(Run.id) == run_id,
                    col(Run.status) == "running",
                    col(Run.delivery) == delivery,
                )
                changed = (
                    session.connection()
                    .execute(
                        again.values(device=device) if device else again.values(delivery=delivery)
                    )
                    .rowcount
                )
            session.commit()
        return bool(changed)

    def _record_unstart(self, run_id: str, delivery: str) -> bool:
        """Compare-and-set: back to `queued`, only from the delivery that started it."""
        statement = (
            update(Run)
            .where(
                col(Run.id) == run_id,
                col(Run.status) == "running",
                col(Run.delivery) == delivery,
            )
            .values(status="queued", delivery=None, started_at=None, backend=None, device=None)
        )
        with Session(self.engine) as session:
            changed = session.connection().execute(statement).rowcount
            session.commit()
        return bool(changed)

    def _record_outcome(self, run_id: str, outcome: dict[str, Any], attempt: int | None) -> bool:
        """Store the outcome and count it as practice, in one transaction. A run that has
        already ended keeps its outcome (a late cancel, say, relabels nothing), and a running
        one only takes the outcome of the delivery that started it."""
        with Session(self.engine) as session:
            run = session.get(Run, run_id, with_for_update=True)
            if run is None or run.status == "done":
                return False
            if attempt is not None and run.status == "running" and run.attempt != attempt:
                return False
            for key, value in outcome.items():
                setattr(run, key, value)
            run.status, run.finished_at = "done", utcnow()
            session.add(run)
            for listener in self.on_end:  # practice, re-solving, lab measurements
                listener(session, run)
            session.commit()
            return True


def _storable(value: object) -> object:
    """Text as every database stores it: PostgreSQL's text cannot hold NUL, so NUL becomes
    U+FFFD, as the sandbox already sends it (this is the backstop)."""
    return value.replace("\x00", "\ufffd") if isinstance(value, str) else value
