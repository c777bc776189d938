"""Runs: the rules for starting one, who may see it, and recording how it went.

How a run reaches a worker and how its events come back is the run queue's business
(app/runqueue); this module holds the database side and the policy: what is accepted, how
many a person may have going, who owns a run, and what its outcome counts for."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass

from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.domain import LearnerScope, RunNotFound, RunRejected, SandboxBusy
from app.models import Run
from app.platform.ratelimit import RunLimiter
from app.runqueue import QueueRefused, RunQueue
from app.runs import idempotency
from app.runs.orphans import driver_id
from sandbox.protocol import (
    Backend,
    GradingRequest,
    Limits,
    RunRequest,
    check_code,
)

log = logging.getLogger("backprop.runs")


@dataclass(frozen=True)
class RunOrigin:
    """Who starts a run and where its code came from."""

    owner: str  # what limits count against (Identity.owner_key); kept as the run's `visitor`
    client: str  # the client's address: a guest's limits count it too (it cannot be minted)
    learner_id: int | None = None  # whose run it is; None for a cookie-less API client
    item_id: int | None = None
    sample_index: int | None = None
    signed_in: bool = False  # `owner` is an account

    @property
    def fair_key(self) -> str:
        """Whom the sandbox shares its slots between: the account, or else the client's
        address, which a guest cannot mint as it can fresh cookies."""
        return self.owner if self.signed_in else f"addr:{self.client}"


@dataclass(frozen=True)
class Submitted:
    """An accepted run, and the capability token that owns it when it has no learner."""

    run: Run
    token: str | None


async def submit(
    engine: Engine,
    queue: RunQueue,
    limiter: RunLimiter,
    *,
    code: object,
    backend: str,
    origin: RunOrigin,
    token_secret: str,
    idempotency_key: str | None = None,
    grading: GradingRequest | None = None,
) -> Submitted:
    """Check, admit and queue a run; return it once a worker has accepted it. A run with no
    learner (a cookie-less API client's) is owned through the capability token returned,
    derived from `token_secret`. With an `idempotency_key`, an owner's earlier run under
    the same key is returned as it stands now instead of starting another. With `grading`,
    the run is a submission to that exercise, graded by the worker."""
    problem = check_code(code)
    if problem:
        raise RunRejected(f"Rejected: {problem}.")
    assert isinstance(code, str)
    if backend not in {b.value for b in Backend}:
        raise RunRejected(f"Rejected: unknown backend '{backend}' (use cpu, cuda or auto).")
    if idempotency_key is not None:
        idempotency.check_key(idempotency_key)
    run_id = secrets.token_hex(16)
    token = idempotency.run_token(token_secret, run_id) if origin.learner_id is None else None
    encoded = code.encode()
    run = Run(
        id=run_id,
        visitor=origin.owner,
        fair_owner=fair_owner(token_secret, origin.fair_key),
        learner_id=origin.learner_id,
        token_sha256=_digest(token) if token else None,
        idempotency_key=idempotency_key,
        driver=driver_id(),
        item_id=origin.item_id,
        sample_index=origin.sample_index,
        code_sha256=hashlib.sha256(encoded).hexdigest(),
        code_bytes=len(encoded),
        code=code.replace("\x00", "\ufffd"),  # as _storable: PostgreSQL text holds no NUL
        backend_requested=backend,
        exercise_slug=grading.slug if grading else None,
        grading_mode=grading.mode.value if grading else None,
    )
    if idempotency_key is not None:
        earlier = await asyncio.to_thread(idempotency.earlier, engine, run)
        if earlier is not None:  # a replay: it neither counts against limits nor runs again
            return Submitted(earlier, idempotency.replay_token(earlier, run, token_secret))
    # Stored queued once the limits admit it: from then on it counts as in flight for its
    # owner and client, on every replica, until the queue records its end.
    try:
        await asyncio.to_thread(
            limiter.admit, run, client=None if origin.signed_in else origin.client
        )
    except IntegrityError:
        # The unique index let a concurrent request with this key store its run first.
        found = await asyncio.to_thread(idempotency.earlier, engine, run)
        if found is None:
            raise
        return Submitted(found, idempotency.replay_token(found, run, token_secret))
    try:
        await queue.submit(request_for(run, grading))
    except QueueRefused as exc:
        raise SandboxBusy(exc.detail, exc.retry_after_seconds) from None
    return Submitted(run, token)


def request_for(run: Run, grading: GradingRequest | None = None) -> RunRequest:
    """What the sandbox is asked to run for a stored run: its code on the backend it asked
    for, with the default limits (the worker clamps them to its ceilings), for its owner
    (the worker and the fleet share their slots fairly between owners), graded against
    `grading` when it is a submission."""
    return RunRequest(
        id=run.id,
        code=run.code,
        backend=Backend(run.backend_requested),
        limits=Limits(),
        owner=run.fair_owner,
        grading=grading,
    )


def fair_owner(secret: str, key: str) -> str:
    """The owner a run is scheduled as (`RunOrigin.fair_key`), keyed with the app's secret:
    the worker, Redis and their logs never see an address or an account id, and nobody
    without the secret can tell whose runs they are."""
    return hmac.new(secret.encode(), f"fair-owner:{key}".encode(), hashlib.sha256).hexdigest()[:32]


def get(engine: Engine, run_id: str) -> Run:
    with Session(engine) as session:
        run = session.get(Run, run_id)
    if run is None:
        raise RunNotFound(run_id)
    return run


def owned(engine: Engine, scope: LearnerScope | None, run_id: str, *, token: str | None) -> Run:
    """The run, if it is the asker's: their learner's, or owned through the capability token
    they hold. Anyone else gets the same answer as for no run."""
    run = get(engine, run_id)
    mine = scope is not None and run.learner_id is not None and run.learner_id == scope.learner_id
    holds = bool(token and run.token_sha256) and hmac.compare_digest(
        _digest(token or ""), run.token_sha256 or ""
    )
    if not (mine or holds):
        raise RunNotFound(run_id)
    return run


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def unfinished_counts(engine: Engine) -> dict[str, int]:
    """Runs queued and running, for the metrics."""
    statement = (
        select(Run.status, func.count())
        .where(col(Run.status).in_(("queued", "running")))
        .group_by(col(Run.status))
    )
    with Session(engine) as session:
        return {status: count for status, count in session.exec(statement)}
