"""Whose personal data a request touches: the learner of a signed-in user or of a guest's
browser. Resolving one gives a LearnerScope, which every other personal-data service takes
first; carrying a guest into an account merges two learners into one."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import bindparam, delete, update
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.db import dialect_of
from app.domain import NOBODY, Identity, LearnerScope
from app.models import (
    Activity,
    CodingRound,
    ExerciseCard,
    ExerciseReviewEvent,
    HintView,
    Item,
    ItemProgress,
    Learner,
    QuizAttempt,
    RecallCheck,
    ReviewCard,
    ReviewEvent,
    Run,
    SolutionReveal,
    utcnow,
)
from app.services import exercise_review, review, study

Row = TypeVar("Row")

# Built once: resolving the learner is part of every personal request.
_BY_VISITOR = select(Learner).where(col(Learner.visitor) == bindparam("visitor"))
_BY_USER = select(Learner).where(col(Learner.user_id) == bindparam("user_id"))
# Only the id, as a plain row: what resolving needs (no entity to build on every page).
_ID_BY_VISITOR = core_select(col(Learner.id)).where(col(Learner.visitor) == bindparam("owner"))
_ID_BY_USER = core_select(col(Learner.id)).where(col(Learner.user_id) == bindparam("owner"))


def guest_learner(session: Session, visitor: str) -> Learner | None:
    return session.exec(_BY_VISITOR, params={"visitor": visitor}).first()


def user_learner(session: Session, user_id: int | None) -> Learner | None:
    return session.exec(_BY_USER, params={"user_id": user_id}).first()


def resolve(session: Session, identity: Identity) -> LearnerScope | None:
    """The scope of the asker's data, or None when they have recorded nothing yet."""
    owner: int | str
    if identity.user_id is not None:
        statement, owner = _ID_BY_USER, identity.user_id
    else:
        statement, owner = _ID_BY_VISITOR, identity.visitor
    learner_id = session.connection().execute(statement, {"owner": owner}).scalar()
    if learner_id is None:
        return None
    return LearnerScope(session, learner_id)


def resolve_or_create(session: Session, identity: Identity) -> LearnerScope:
    """The scope of the asker's data, creating their learner on first need (not committed).
    Two first requests of one browser at once may both create it: the insert gives way to
    a learner already there (ON CONFLICT DO NOTHING), and both then take the one row."""
    scope = resolve(session, identity)
    if scope is not None:
        return scope
    owner = (
        {"user_id": identity.user_id}
        if identity.user_id is not None
        else {"visitor": identity.visitor}
    )
    insert = dialect_of(session).insert(Learner).values(**owner, created_at=utcnow())
    session.execute(insert.on_conflict_do_nothing())
    scope = resolve(session, identity)
    assert scope is not None  # inserted now, or by the request that won
    return scope


def for_reading(session: Session, identity: Identity) -> LearnerScope:
    """The asker's data for reading. Someone who has done nothing yet has no learner: they
    read as empty, in the same shapes, and nothing is created for them."""
    return resolve(session, identity) or LearnerScope(session, NOBODY)


def carry_guest_into_account(session: Session, *, visitor: str, user_id: int) -> None:
    """At sign-up or sign-in, this browser's guest data becomes the account's (merged with
    what the account already has). Not committed: part of the sign-in transaction."""
    guest = guest_learner(session, visitor)
    if guest is None:
        return
    own = user_learner(session, user_id)
    if own is None:
        guest.user_id, guest.visitor = user_id, None
        session.add(guest)
        session.flush()
    else:
        merge(session, source=guest, target=own)


def _carry_exercise_help(session: Session, *, source: int, target: int) -> None:
    """Hints shown and solutions revealed are kept once per learner, the earlier of two
    (an exercise's status asks what came before its first pass): of a pair, the later row
    is dropped, so that the guest's rows can move (merge)."""
    both = (target, source)
    _keep_earliest(
        session,
        session.exec(select(HintView).where(col(HintView.learner_id).in_(both))),
        key=lambda h: (h.exercise_slug, h.hint_index),
        when=lambda h: h.shown_at,
    )
    _keep_earliest(
        session,
        session.exec(select(SolutionReveal).where(col(SolutionReveal.learner_id).in_(both))),
        key=lambda r: r.exercise_slug,
        when=lambda r: r.revealed_at,
    )
    session.flush()


def _keep_earliest(
    session: Session,
    rows: Iterable[Row],
    *,
    key: Callable[[Row], Hashable],
    when: Callable[[Row], datetime],
) -> None:
    kept: dict[Hashable, Row] = {}
    for row in list(rows):
        other = kept.get(key(row))
        if other is None:
            kept[key(row)] = row
            continue
        later, kept[key(row)] = (row, other) if when(row) >= when(other) else (other, row)
        session.delete(later)


def merge(session: Session, *, source: Learner, target: Learner) -> None:
    """Carry a guest's data into an account's learner (at sign-in), then drop the guest.
    Both have rows for an item: counts add up, a bookmark on either stays, notes are kept
    both, and the status is derived again. Not committed: the caller's transaction."""
    assert source.id is not None and target.id is not None
    theirs = study.progress_by_item(LearnerScope(session, source.id))
    ours = LearnerScope(session, target.id)
    existing = study.progress_by_item(ours)
    touched: list[int] = []
    for item_id, guest in theirs.items():
        row = existing.get(item_id)
        if row is None:
            continue
        row.visits += guest.visits
        row.runs += guest.runs
        row.runs_ok += guest.runs_ok
        row.bookmarked = row.bookmarked or guest.bookmarked
        if guest.note and guest.note != row.note:
            row.note = f"{row.note}\n\n{guest.note}".strip()
        row.first_visit_at = min(
            (t for t in (row.first_visit_at, guest.first_visit_at) if t), default=None
        )
        row.last_visit_at = max(
            (t for t in (row.last_visit_at, guest.last_visit_at) if t), default=None
        )
        session.add(row)
        session.delete(guest)
        touched.append(item_id)
    session.flush()
    session.execute(
        update(ItemProgress)
        .where(col(ItemProgress.learner_id) == source.id)
        .values(learner_id=target.id)
    )
    _carry_exercise_help(session, source=source.id, target=target.id)
    for model in (RecallCheck, Run, QuizAttempt, HintView, SolutionReveal, CodingRound):
        session.execute(
            update(model).where(col(model.learner_id) == source.id).values(learner_id=target.id)
        )
    _merge_cards(
        session,
        source_id=source.id,
        target=ours,
        events=ReviewEvent,
        key=ReviewEvent.question_id,
        cards=ReviewCard,
        recompute=review.recompute,
    )
    _merge_cards(
        session,
        source_id=source.id,
        target=ours,
        events=ExerciseReviewEvent,
        key=ExerciseReviewEvent.exercise_slug,
        cards=ExerciseCard,
        recompute=exercise_review.recompute,
    )
    for day in session.exec(select(Activity).where(Activity.learner_id == source.id)):
        study.count_day(ours, day.day, views=day.views, runs=day.runs, checks=day.checks)
    session.execute(delete(Activity).where(col(Activity.learner_id) == source.id))
    session.delete(source)
    session.flush()
    for item in session.exec(select(Item).where(col(Item.id).in_(touched))):
        study.refresh_status(ours, item)


def _merge_cards(
    session: Session,
    *,
    source_id: int,
    target: LearnerScope,
    events: Any,
    key: Any,
    cards: Any,
    recompute: Callable[[LearnerScope, Any], object],
) -> None:
    """The guest's review events (of questions, or of exercises) join the account's log,
    and each card the guest had is the merged log replayed (`recompute`): a card is derived
    from its log, never merged by hand."""
    keys = set(session.exec(select(key).where(events.learner_id == source_id)))
    session.execute(
        update(events).where(events.learner_id == source_id).values(learner_id=target.learner_id)
    )
    session.execute(delete(cards).where(cards.learner_id == source_id))
    for found in sorted(keys):
        recompute(target, found)
