"""Spaced review: each question is a card per learner, scheduled with FSRS (the `fsrs`
package), and so is each solved exercise (app/exercises/review.py keeps their logs, on a
scheduler of its own without learning steps). The review log is the source of
truth: a card's schedule is the log replayed, so it can always be computed again. Times
are UTC everywhere.

Ratings follow from what the learner did: a wrong answer is Again, a right but slow one
Hard, a right one Good; an open answer rates by the share of key points the learner says
they covered.

Same-day steps: by default only a wrong answer brings a question back the same day
(SAME_DAY_STEP later, while its explanation is fresh); a right one, new question or not, waits
the day-scale interval FSRS gives it. FSRS's own learning steps (a new question answered
right back after 10 minutes, then again) filled the review queue with questions just
answered right: three due became nine within 20 minutes. An account may turn those short
steps back on (User.short_learning_steps); a guest has the default."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

from fsrs import Card, Rating, Scheduler
from sqlalchemy import Connection, bindparam, func
from sqlalchemy import select as core_select
from sqlmodel import col, select

from app.domain import Identity, LearnerScope
from app.models import Learner, ReviewCard, ReviewEvent, User, aware
from app.platform.due_count import due_count_of

SLOW_SECONDS = 45.0  # a right answer that took longer than this rates Hard


class ReviewSource:
    QUIZ = "quiz"
    OPEN = "open"


SAME_DAY_STEP = timedelta(minutes=10)  # a wrong answer's wait (FSRS's own steps: 1 min first)


@cache
def _scheduler(*, short_steps: bool = True, again: bool = False) -> Scheduler:
    """FSRS with its own learning steps (short steps), or, by default, with a single
    same-day step for a wrong answer and none for a right one: FSRS moves a card that has
    no step left to take straight to its day-scale interval. The model's parameters, hence
    stability and difficulty, are the same either way."""
    # No fuzzing: replaying a log must give exactly the schedule it gave the first time.
    if short_steps:
        return Scheduler(enable_fuzzing=False)
    steps = (SAME_DAY_STEP,) if again else ()
    return Scheduler(learning_steps=steps, relearning_steps=steps, enable_fuzzing=False)


def _reviewed(card: Card, rating: Rating, at: datetime, *, short_steps: bool) -> Card:
    scheduler = _scheduler(short_steps=short_steps, again=rating is Rating.Again)
    return scheduler.review_card(card, rating, at)[0]


def short_steps_for(scope: LearnerScope) -> bool:
    """Whether the learner's account asks for short learning steps (a guest: no)."""
    found = scope.session.exec(
        select(User.short_learning_steps)
        .join(Learner, col(Learner.user_id) == col(User.id))
        .where(Learner.id == scope.learner_id)
    ).first()
    return bool(found)


def rating_for_answer(*, correct: bool, seconds: float | None) -> int:
    if not correct:
        return int(Rating.Again)
    if seconds is not None and seconds > SLOW_SECONDS:
        return int(Rating.Hard)
    return int(Rating.Good)


def rating_for_points(*, ticked: int, total: int) -> int:
    """All points covered: Easy; most: Good; some: Hard; none: Again."""
    share = ticked / total if total else 0.0
    if share >= 1.0:
        return int(Rating.Easy)
    if share >= 0.5:
        return int(Rating.Good)
    return int(Rating.Hard) if share > 0 else int(Rating.Again)


def record(
    scope: LearnerScope, question_id: int, *, rating: int, source: str, at: datetime
) -> ReviewCard:
    """Log one recall and move the card on (not committed)."""
    scope.session.add(
        ReviewEvent(
            learner_id=scope.learner_id,
            question_id=question_id,
            rating=rating,
            source=source,
            reviewed_at=at,
        )
    )
    row = scope.session.get(ReviewCard, (scope.learner_id, question_id))
    card = _card(row.card) if row else Card(card_id=question_id, due=at)
    card = _reviewed(card, Rating(rating), at, short_steps=short_steps_for(scope))
    return _save(scope, question_id, card, row)


def recompute(scope: LearnerScope, question_id: int) -> ReviewCard | None:
    """The card again, from its log alone (None when the learner never recalled it), with
    the learner's same-day steps as they are now."""
    events = scope.session.exec(
        select(ReviewEvent)
        .where(
            ReviewEvent.learner_id == scope.learner_id,
            ReviewEvent.question_id == question_id,
        )
        .order_by(col(ReviewEvent.reviewed_at), col(ReviewEvent.id))
    ).all()
    if not events:
        return None
    card = Card(card_id=question_id, due=aware(events[0].reviewed_at))
    short_steps = short_steps_for(scope)
    for event in events:
        card = _reviewed(
            card, Rating(event.rating), aware(event.reviewed_at), short_steps=short_steps
        )
    row = scope.session.get(ReviewCard, (scope.learner_id, question_id))
    return _save(scope, question_id, card, row)


def due_questions(scope: LearnerScope, *, now: datetime, limit: int = 30) -> list[int]:
    """The questions due now, the longest overdue first."""
    return list(
        scope.session.exec(
            select(ReviewCard.question_id)
            .where(ReviewCard.learner_id == scope.learner_id, col(ReviewCard.due) <= now)
            .order_by(col(ReviewCard.due))
            .limit(limit)
        )
    )


def due_count(scope: LearnerScope, *, now: datetime) -> int:
    return scope.session.exec(
        select(func.count())
        .select_from(ReviewCard)
        .where(ReviewCard.learner_id == scope.learner_id, col(ReviewCard.due) <= now)
    ).one()


@dataclass(frozen=True)
class NextReview:
    """When a question comes back, as seen from the answer that scheduled it."""

    due: datetime
    wait: timedelta  # from that answer

    @property
    def same_day(self) -> bool:
        return self.wait < timedelta(days=1)

    @property
    def when(self) -> str:
        """ "in 10 min", "in 3 h", "in 1 day", "in 12 days"."""
        minutes = max(1, round(self.wait.total_seconds() / 60))
        if minutes < 60:
            return f"in {minutes} min"
        if minutes < 24 * 60:
            return f"in {round(minutes / 60)} h"
        days = round(minutes / (24 * 60))
        return f"in {days} day{'' if days == 1 else 's'}"


def next_reviews(scope: LearnerScope, answered: dict[int, datetime]) -> dict[int, NextReview]:
    """question id → when it comes back, for questions answered at the times given."""
    rows = scope.session.exec(
        select(ReviewCard.question_id, ReviewCard.due).where(
            ReviewCard.learner_id == scope.learner_id,
            col(ReviewCard.question_id).in_(list(answered)),
        )
    )
    return {qid: NextReview(aware(due), aware(due) - aware(answered[qid])) for qid, due in rows}


@dataclass(frozen=True)
class Recall:
    question_id: int
    retrievability: float  # the chance of recalling it at the moment asked about, 0..1


def recall_on(scope: LearnerScope, when: datetime) -> dict[int, Recall]:
    """Every reviewed question's expected recall at `when`."""
    rows = scope.session.exec(select(ReviewCard).where(ReviewCard.learner_id == scope.learner_id))
    scheduler = _scheduler()
    return {
        row.question_id: Recall(
            row.question_id, scheduler.get_card_retrievability(_card(row.card), when)
        )
        for row in rows
    }


def _card(data: str) -> Card:
    return Card.from_dict(json.loads(data))


def _save(scope: LearnerScope, question_id: int, card: Card, row: ReviewCard | None) -> ReviewCard:
    data = json.dumps(card.to_dict())
    if row is None:
        row = ReviewCard(
            learner_id=scope.learner_id, question_id=question_id, due=card.due, card=data
        )
    else:
        row.due, row.card = card.due, data
    scope.session.add(row)
    scope.session.flush()
    return row


_DUE_FOR_USER = core_select(due_count_of(col(Learner.user_id) == bindparam("owner")))
_DUE_FOR_GUEST = core_select(due_count_of(col(Learner.visitor) == bindparam("owner")))


def due_for(connection: Connection, identity: Identity, *, now: datetime) -> int:
    """How many questions and exercises are due for the asker: one statement on a plain
    connection."""
    owner: int | str
    if identity.user_id is not None:
        statement, owner = _DUE_FOR_USER, identity.user_id
    else:
        statement, owner = _DUE_FOR_GUEST, identity.visitor
    return int(connection.execute(statement, {"owner": owner, "now": now}).scalar_one())
