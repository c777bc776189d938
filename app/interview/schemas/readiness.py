"""Readiness for an interview date in the JSON API: expected recall of the questions per
topic, and of each solved exercise."""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from app.interview.readiness import CodingReadiness, ExerciseRecall, Forecast, TopicReadiness


class TopicReadinessPublic(BaseModel):
    topic: str
    title: str
    questions: int
    answered: int = Field(description="Questions recalled at least once.")
    expected_recall: float = Field(description="Mean over the topic's questions, 0..1.")

    @classmethod
    def of(cls, t: TopicReadiness) -> TopicReadinessPublic:
        return cls(
            topic=t.slug,
            title=t.title,
            questions=t.questions,
            answered=t.answered,
            expected_recall=t.expected_recall,
        )


class ExerciseRecallPublic(BaseModel):
    exercise: str
    title: str
    difficulty: str
    recall_now: float = Field(description="The chance of solving it again now, 0..1.")
    expected_recall: float = Field(description="The chance on the interview day, 0..1.")

    @classmethod
    def of(cls, e: ExerciseRecall) -> ExerciseRecallPublic:
        return cls(
            exercise=e.slug,
            title=e.title,
            difficulty=e.difficulty,
            recall_now=e.recall_now,
            expected_recall=e.expected_recall,
        )


class CodingReadinessPublic(BaseModel):
    """The exercises solved so far (each has a re-solving card), weakest on the day first."""

    solved: int
    total: int = Field(description="Exercises in the set.")
    recall_now: float = Field(description="Mean over the solved exercises, now.")
    expected_recall: float = Field(description="Mean over the solved exercises, on the day.")
    exercises: list[ExerciseRecallPublic]

    @classmethod
    def of(cls, c: CodingReadiness) -> CodingReadinessPublic:
        return cls(
            solved=c.solved,
            total=c.total,
            recall_now=c.recall_now,
            expected_recall=c.expected_recall,
            exercises=[ExerciseRecallPublic.of(e) for e in c.exercises],
        )


class ReadinessPublic(BaseModel):
    on: date
    expected_recall: float = Field(
        description="Over all questions; one never answered counts as not known."
    )
    topics: list[TopicReadinessPublic]
    coding: CodingReadinessPublic

    @classmethod
    def of(cls, f: Forecast) -> ReadinessPublic:
        return cls(
            on=f.on,
            expected_recall=f.overall,
            topics=[TopicReadinessPublic.of(t) for t in f.topics],
            coding=CodingReadinessPublic.of(f.coding),
        )
