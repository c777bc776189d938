"""Idempotency-Key for starting runs: the same key from the same owner names one run, so a
client that retries (its first answer lost, say) never starts a second one.

The unique index on (run.visitor, run.idempotency_key) decides between concurrent requests;
the lookup before inserting only spares a replay the rate limits."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import DomainError
from app.models import Run

# A UUID, a ULID, or any short token of these characters.
KEY_PATTERN = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


class BadIdempotencyKey(DomainError):
    """An Idempotency-Key header that is too long or holds characters keys may not."""

    status = 400


class IdempotencyKeyReused(DomainError):
    """An Idempotency-Key sent again with a different request."""

    status = 422


def check_key(key: str) -> None:
    """BadIdempotencyKey unless `key` is 1 to 64 letters, digits, '-', '_', '.' or ':'."""
    if not KEY_PATTERN.fullmatch(key):
        raise BadIdempotencyKey(
            "The Idempotency-Key header must be 1 to 64 letters, digits, '-', '_', '.' or ':' "
            "(a UUID, say); nothing was run."
        )


def run_token(secret: str, run_id: str) -> str:
    """The capability token of a run without a learner: derived, never stored (only its
    digest is), so a replayed request gets the token the first answer carried."""
    mac = hmac.new(secret.encode(), f"run-token\x00{run_id}".encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()[:24]).decode()


def earlier(engine: Engine, run: Run) -> Run | None:
    """The run its owner stored earlier under the same key, if any (None for a run sent
    without a key)."""
    if run.idempotency_key is None:
        return None
    statement = select(Run).where(
        Run.visitor == run.visitor, Run.idempotency_key == run.idempotency_key
    )
    with Session(engine) as session:
        return session.exec(statement).first()


def replay_token(earlier: Run, asked: Run, secret: str) -> str | None:
    """The token that owns `earlier` (None when a learner does), when `asked` is the same
    request again; IdempotencyKeyReused when it is another."""
    if _request_of(asked) != _request_of(earlier):
        raise IdempotencyKeyReused(
            "This Idempotency-Key was already used for a different request (other code, "
            "backend, sample, exercise or mode); send a new key for a new run. Nothing was run."
        )
    return run_token(secret, earlier.id) if earlier.learner_id is None else None


def _request_of(run: Run) -> tuple[object, ...]:
    """What makes two requests the same one."""
    return (
        run.code_sha256,
        run.backend_requested,
        run.item_id,
        run.sample_index,
        run.exercise_slug,
        run.grading_mode,
    )
