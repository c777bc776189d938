"""Submissions to code exercises: a run with a grading payload (sandbox/README.md,
"Grading"), started, limited, owned and followed as every run is (app/runs/runs.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.domain import InvalidInput, LearnerScope, NotFound, RunRejected
from app.exercises import catalogue
from app.models import CodingRound, Run
from app.platform.ratelimit import RunLimiter
from app.runqueue import RunQueue
from app.runs import runs
from app.runs.runs import RunOrigin, Submitted
from sandbox.protocol import GradingRequest, WorkerStatus, check_code


class SubmissionNotFound(NotFound):
    def __init__(self, slug: str, submission_id: str) -> None:
        super().__init__(f"Exercise '{slug}' has no submission with the id '{submission_id}'.")


def prepare(
    engine: Engine, content_dir: Path, *, slug: str, code: str, backend: str, mode: str
) -> tuple[str, GradingRequest]:
    """Check a submission before anything is recorded for it: the exercise, the code and
    the backend; then the backend to ask for, and the grading payload, whose trusted
    sources are read from the content folder now and travel with the request only.
    Blocking: call it in a thread."""
    problem = check_code(code)
    if problem:
        raise RunRejected(f"Rejected: {problem}.")
    with engine.connect() as connection:
        exercise = catalogue.one(connection, slug)
    offered = exercise.backend_list
    if backend == "auto" and "cuda" not in offered:
        backend = "cpu"  # auto would pick a GPU this exercise is not graded on
    elif backend != "auto" and backend not in offered:
        raise InvalidInput(f"This exercise is graded on {' or '.join(offered)}, not {backend}.")
    return backend, catalogue.grading_request(content_dir, slug, mode)


@dataclass(frozen=True)
class SideBySide:
    """Where a `both` submission is graded: the backends, CPU first, and why each device
    left out is left out (the page shows that row as absent, with the reason)."""

    backends: list[str]
    absent: dict[str, str]


def side_by_side(engine: Engine, slug: str, status: WorkerStatus) -> SideBySide:
    """The devices a submission with backend `both` is graded on here; InvalidInput when
    there is none. Blocking."""
    with engine.connect() as connection:
        devices = devices_for(catalogue.one(connection, slug).backend_list, status)
    if not devices.backends:
        raise InvalidInput(" ".join(devices.absent.values()))
    return devices


def devices_for(offered: list[str], status: WorkerStatus) -> SideBySide:
    """Which of the CPU and the GPU an exercise graded on `offered` is graded on now, and
    why each other one is not (the exercise page says the same of its GPU row)."""
    backends: list[str] = []
    absent: dict[str, str] = {}
    for backend in ("cpu", "cuda"):
        if backend not in offered:
            others = " and ".join(b.upper() for b in offered)
            absent[backend] = f"This exercise is graded on the {others} only."
        elif not status.available and backend == "cpu":
            backends.append(backend)  # queued for the worker that is starting
        elif not status.available:
            absent[backend] = f"The sandbox is not ready: {status.detail}"
        elif backend in status.backends:
            backends.append(backend)
        else:
            absent[backend] = status.absent.get(backend) or (
                f"This server has no {backend.upper()} backend right now."
            )
    return SideBySide(backends, absent)


def twin_key(idempotency_key: str | None, backend: str) -> str | None:
    """The Idempotency-Key of a `both` submission's second run: the client's, told apart
    (a retry of the pair gives the same two runs)."""
    if idempotency_key is None:
        return None
    return f"{idempotency_key[: 63 - len(backend)]}:{backend}"


async def submit(
    engine: Engine,
    queue: RunQueue,
    limiter: RunLimiter,
    *,
    code: str,
    backend: str,
    grading: GradingRequest,
    origin: RunOrigin,
    token_secret: str,
    idempotency_key: str | None = None,
) -> Submitted:
    """Queue `code` to be graded (`prepare` made `backend` and `grading`): the visible
    tests (mode `run`) or all of them (`submit`)."""
    return await runs.submit(
        engine,
        queue,
        limiter,
        code=code,
        backend=backend,
        origin=origin,
        token_secret=token_secret,
        idempotency_key=idempotency_key,
        grading=grading,
    )


def owned(
    engine: Engine, scope: LearnerScope | None, slug: str, submission_id: str, *, token: str | None
) -> Run:
    """The submission, if it is the asker's and one of this exercise's."""
    try:
        run = runs.owned(engine, scope, submission_id, token=token)
    except NotFound:
        raise SubmissionNotFound(slug, submission_id) from None
    if run.exercise_slug != slug:
        raise SubmissionNotFound(slug, submission_id)
    return run


# The Submissions tab: every grading of the learner's code on this exercise (Runs and
# Submits, a coding round's included), newest first, each with its code.

HISTORY_LIMIT = 50


@dataclass(frozen=True)
class PastSubmission:
    run: Run
    in_round: bool  # graded as a coding round's result


def history(
    session: Session, learner_id: int, slug: str, *, limit: int = HISTORY_LIMIT
) -> list[PastSubmission]:
    runs_of = session.exec(
        select(Run)
        .where(
            Run.learner_id == learner_id,
            Run.exercise_slug == slug,
            col(Run.grading_mode).is_not(None),
        )
        .order_by(col(Run.created_at).desc())
        .limit(limit)
    ).all()
    round_runs = set(
        session.exec(
            select(CodingRound.run_id).where(
                CodingRound.learner_id == learner_id, CodingRound.exercise_slug == slug
            )
        )
    )
    return [PastSubmission(run, run.id in round_runs) for run in runs_of]


def one_of_history(session: Session, learner_id: int, slug: str, submission_id: str) -> Run:
    """One of the learner's gradings on this exercise (for its diff against the editor)."""
    run = session.get(Run, submission_id)
    if run is None or run.learner_id != learner_id or run.exercise_slug != slug:
        raise SubmissionNotFound(slug, submission_id)
    return run
