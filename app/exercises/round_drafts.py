"""A coding round's code is never lost: the editor's code is kept as the round's draft as the
learner types (so a reload gets it back), and when the round ends with code that was not
submitted (time ran out, the tab was closed, or "I'm done" with unsubmitted changes), that
code is graded as the round's last submission.

The draft may arrive a moment after the deadline (the page sends it when its clock reaches
zero, over a network): saves within DRAFT_GRACE of the round's end are kept, later ones are
refused. The leftover is sent to be graded once: the first page to see it claims it.

`submit_to_round` is how any code reaches a round's grader: the learner's Run and Submit
(app/exercises/routes/coding_api.py) and the leftover alike."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col

from app.domain import MAX_DRAFT_CHARACTERS, DomainError, Identity, InvalidInput, LearnerScope
from app.exercises import coding_rounds, submissions
from app.exercises.drafts import as_typed
from app.models import CodingRound, Run, aware
from app.platform import learners
from app.platform.ratelimit import RunLimiter
from app.runqueue import RunQueue
from app.runs.run_origin import origin_for
from app.runs.runs import Submitted

# How long after a round ends its page may still send the editor's code: the time a save
# sent at zero takes to arrive, not time to keep typing.
DRAFT_GRACE = timedelta(seconds=10)


def keep(scope: LearnerScope, round_id: str, *, code: str, now: datetime) -> CodingRound:
    """Keep `code` as the round's draft (not committed); refused once the round has been
    over for longer than DRAFT_GRACE."""
    if len(code) > MAX_DRAFT_CHARACTERS:
        raise InvalidInput(f"A draft holds at most {MAX_DRAFT_CHARACTERS:,} characters.")
    found = coding_rounds.own_round(scope.session, scope.learner_id, round_id, now)
    if found.started_at is None:
        raise coding_rounds.RoundNotStarted("This coding round has not started yet.")
    if found.closed_at is not None and now > aware(found.closed_at) + DRAFT_GRACE:
        raise coding_rounds.RoundClosed(
            f"This coding round ended at {aware(found.closed_at):%H:%M:%S} UTC: its code "
            "can no longer change."
        )
    if found.draft_graded_at is not None:
        raise coding_rounds.RoundClosed("This round's last code has already been graded.")
    found.draft_code = as_typed(code)
    found.draft_saved_at = now
    scope.session.add(found)
    scope.session.flush()
    return found


def leftover(session: Session, found: CodingRound) -> str | None:
    """The code a closed round ends with that no submission graded, if any."""
    if found.closed_at is None or found.draft_graded_at is not None or found.draft_code is None:
        return None
    submitted = session.get(Run, found.run_id) if found.run_id else None
    if submitted is not None and as_typed(submitted.code) == found.draft_code:
        return None  # its last submission was this code: already the result
    return found.draft_code


def _claim(
    engine: Engine, identity: Identity, round_id: str, now: datetime
) -> tuple[str, str] | None:
    """Mark the round's leftover draft as sent to be graded, and return it; None when there
    is none, or another request claimed it first. Blocking."""
    with Session(engine) as session:
        scope = learners.resolve(session, identity)
        if scope is None:
            return None
        found = coding_rounds.own_round(session, scope.learner_id, round_id, now)
        code, slug = leftover(session, found), found.exercise_slug
        if code is None:
            return None
        claimed = session.execute(
            update(CodingRound)
            .where(col(CodingRound.id) == round_id, col(CodingRound.draft_graded_at).is_(None))
            .values(draft_graded_at=now)
        )
        session.commit()
        if claimed.rowcount != 1:  # type: ignore[attr-defined]
            return None
        return code, slug


def _unclaim(engine: Engine, round_id: str) -> None:
    """The leftover could not be queued (the sandbox refused it): a later visit tries again."""
    with Session(engine) as session:
        session.execute(
            update(CodingRound).where(col(CodingRound.id) == round_id).values(draft_graded_at=None)
        )
        session.commit()


async def grade_leftover(
    engine: Engine,
    queue: RunQueue,
    limiter: RunLimiter,
    identity: Identity,
    round_id: str,
    *,
    content_dir: Path,
    client: str,
    token_secret: str,
    now: datetime,
) -> bool:
    """Send a closed round's unsubmitted code to be graded as its last submission; whether
    one was sent. A refusal for now (the sandbox busy, the run limit reached) is left for
    the page's next look; code the sandbox will never take (too long, say) is given up."""
    claimed = await asyncio.to_thread(_claim, engine, identity, round_id, now)
    if claimed is None:
        return False
    code, slug = claimed
    try:
        await submit_to_round(
            engine,
            queue,
            limiter,
            identity,
            round_id,
            slug=slug,
            code=code,
            backend="auto",
            mode="submit",
            content_dir=content_dir,
            client=client,
            token_secret=token_secret,
            idempotency_key=f"round-end-{round_id}",
        )
    except DomainError as refused:
        if refused.status in (429, 503):
            await asyncio.to_thread(_unclaim, engine, round_id)
        return False
    return True


async def submit_to_round(
    engine: Engine,
    queue: RunQueue,
    limiter: RunLimiter,
    identity: Identity,
    round_id: str,
    *,
    slug: str,
    code: str,
    backend: str,
    mode: str,
    content_dir: Path,
    client: str,
    token_secret: str,
    idempotency_key: str | None,
) -> Submitted:
    """Grade code against a round's exercise (`slug`, which the round admitted), as any
    submission is; a `submit` becomes the round's graded submission."""
    backend, grading = await asyncio.to_thread(
        submissions.prepare,
        engine,
        content_dir,
        slug=slug,
        code=code,
        backend=backend,
        mode=mode,
    )
    origin = await asyncio.to_thread(
        origin_for, engine, identity, client=client, item_slug=None, sample=None
    )
    submitted = await submissions.submit(
        engine,
        queue,
        limiter,
        code=code,
        backend=backend,
        grading=grading,
        origin=origin,
        token_secret=token_secret,
        idempotency_key=idempotency_key,
    )
    if mode == "submit":
        await asyncio.to_thread(
            coding_rounds.record, engine, identity, round_id, run_id=submitted.run.id
        )
    return submitted
