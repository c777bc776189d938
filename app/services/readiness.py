"""Readiness for an interview date: the expected recall of each topic's questions on that
day (FSRS's retrievability; a question never answered counts as not known), and the
questions to review first."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import LearnerScope
from app.models import Item, Question
from app.services import review
from app.services.catalogue import Catalogue

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
class Forecast:
    on: date
    topics: list[TopicReadiness]
    review_first: list[WeakQuestion]

    @property
    def overall(self) -> float:
        total = sum(t.questions for t in self.topics)
        return sum(t.expected_recall * t.questions for t in self.topics) / total if total else 0.0


def forecast(scope: LearnerScope, catalogue: Catalogue, *, on: date) -> Forecast:
    """Expected recall per topic on the morning of `on` (09:00 UTC)."""
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
    return Forecast(on=on, topics=topics, review_first=weak[:REVIEW_FIRST])
