"""A guest carried into an account: at sign-up or sign-in, the browser's guest learner is
merged into the account's, every feature's rows with it (progress, runs, quizzes, reviews,
exercise help, coding rounds, activity)."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import delete, update
from sqlmodel import Session, col, select

from app.domain import LearnerScope
from app.exercises import review as exercise_review
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
)
from app.platform.learners import guest_learner, user_learner
from app.progress import study
from app.study import review

Row = TypeVar("Row")


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
