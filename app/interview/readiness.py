"""Readiness for an interview date: the expected recall of each topic's questions on that
day (FSRS's retrievability; a question never answered counts as not known), the questions
to review first, and coding: the chance of solving again each exercise solved so far, now
and on the day."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import LearnerScope
from app.exercises import review as exercise_review
from app.library.catalogue import Catalogue
from app.models import Exercise, Item, Question
from app.study import review

REVIEW_FIRST = 8


@dataclass(frozen=True)
class TopicReadiness:
    slug: str
    title: str
    questions: int
    answered: int  # questions the learner has recalled at least once
    expected_recall: float  # mean over the topic's questions, 0..1

    @property
    def percent(self) -> float:
        return 100.0 * self.expected_recall


@dataclass(frozen=True)
class WeakQuestion:
    prompt: str
    item_slug: str
    item_title: str
    expected_recall: float


@dataclass(frozen=True)
class ExerciseRecall:
    slug: str
    title: str
    difficulty: str
    recall_now: float  # the chance of solving it again now, 0..1
    expected_recall: float  # ... on the day


@dataclass(frozen=True)
class CodingReadiness:
    """The exercises solved so far (those with a re-solving card), weakest on the day first,
    of `total` in the set."""

    exercises: list[ExerciseRecall]
    total: int

    @property
    def solved(self) -> int:
        return len(self.exercises)

    @property
    def recall_now(self) -> float:
        return _mean([e.recall_now for e in self.exercises])

    @property
    def expected_recall(self) -> float:
        return _mean([e.expected_recall for e in self.exercises])


@dataclass(frozen=True)
class Forecast:
    on: date
    topics: list[TopicReadiness]
    review_first: list[WeakQuestion]
    coding: CodingReadiness

    @property
    def overall(self) -> float:
        total = sum(t.questions for t in self.topics)
        return sum(t.expected_recall * t.questions for t in self.topics) / total if total else 0.0


def forecast(scope: LearnerScope, catalogue: Catalogue, *, on: date, now: datetime) -> Forecast:
    """Expected recall per topic, and of each solved exercise, on the morning of `on`
    (09:00 UTC)."""
    when = datetime.combine(on, time(9, 0), tzinfo=UTC)
    recall = review.recall_on(scope, when)
    rows = scope.session.execute(
        core_select(
            col(Question.id),
            col(Question.prompt),
            col(Item.slug),
            col(Item.title),
            col(Item.topic_slug),
        ).join(Item, col(Item.id) == col(Question.item_id))
    ).all()
    by_topic: dict[str, list[float]] = {}
    answered: dict[str, int] = {}
    weak = []
    for question_id, prompt, slug, title, topic in rows:
        known = recall.get(question_id)
        value = known.retrievability if known else 0.0
        by_topic.setdefault(topic, []).append(value)
        answered[topic] = answered.get(topic, 0) + (known is not None)
        if known is not None:
            weak.append(WeakQuestion(prompt, slug, title, value))
    topics = [
        TopicReadiness(
            t.slug,
            t.title,
            len(by_topic[t.slug]),
            answered.get(t.slug, 0),
            sum(by_topic[t.slug]) / len(by_topic[t.slug]),
        )
        for t in catalogue.topics
        if by_topic.get(t.slug)
    ]
    weak.sort(key=lambda w: w.expected_recall)
    return Forecast(on, topics, weak[:REVIEW_FIRST], coding(scope, when=when, now=now))


def coding(scope: LearnerScope, *, when: datetime, now: datetime) -> CodingReadiness:
    """The chance of solving again each exercise with a card, now and at `when`."""
    on_day = exercise_review.recall_on(scope, when)
    today = exercise_review.recall_on(scope, now)
    rows = scope.session.execute(
        core_select(col(Exercise.slug), col(Exercise.title), col(Exercise.difficulty)).order_by(
            col(Exercise.position)
        )
    ).all()
    solved = [
        ExerciseRecall(slug, title, difficulty, today[slug], on_day[slug])
        for slug, title, difficulty in rows
        if slug in on_day
    ]
    solved.sort(key=lambda e: e.expected_recall)
    return CodingReadiness(solved, len(rows))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0
