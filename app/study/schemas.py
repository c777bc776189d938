"""Quizzes as the API takes and shows them. Keys (`correct`, `why`) are null until a
question's answer is locked: answered in practice mode, or the quiz closed."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from app.study.quizzes import (
    MAX_QUESTIONS,
    MAX_SECONDS,
    MIN_QUESTIONS,
    MIN_SECONDS,
    AttemptView,
    QuizMode,
)


class QuizCreate(BaseModel):
    """A quiz to start: `seconds` is the time limit of a timed quiz."""

    deck: str | None = Field(None, max_length=64)
    topics: list[str] = Field(default_factory=list, max_length=40)
    count: int = Field(10, ge=MIN_QUESTIONS, le=MAX_QUESTIONS)
    seconds: int | None = Field(600, ge=MIN_SECONDS, le=MAX_SECONDS)
    mode: QuizMode = QuizMode.timed
    code_prompts: bool = Field(
        False,
        description="A mock interview draws conceptual prompts only, unless this is true: "
        "then questions about what shown code prints may come too.",
    )


class ChoicePublic(BaseModel):
    id: str = Field(description="A letter, in this attempt's shuffled order.")
    text: str
    correct: bool | None = None
    why: str | None = None


class QuizQuestionPublic(BaseModel):
    id: int = Field(description="The question's place in this quiz, from 1.")
    prompt: str
    code: str | None = Field(
        None, description="Python shown with the prompt, when the question asks about code."
    )
    item: str = Field(description="Slug of the item the question comes from.")
    choices: list[ChoicePublic]
    answer: str | None = Field(None, description="The letter chosen, once answered.")
    correct: bool | None = None
    seconds: float | None = Field(None, description="From first shown to answered.")


class QuizPublic(BaseModel):
    """A quiz as it stands; `score` once it is closed."""

    id: str
    mode: QuizMode
    title: str
    started_at: datetime
    deadline: datetime | None
    seconds_left: float | None
    closed: bool
    score: int | None
    total: int
    questions: list[QuizQuestionPublic]

    @classmethod
    def of(cls, view: AttemptView) -> QuizPublic:
        attempt = view.attempt
        return cls(
            id=attempt.id,
            mode=QuizMode(attempt.mode),
            title=attempt.title,
            started_at=attempt.started_at,
            deadline=attempt.deadline,
            seconds_left=view.seconds_left,
            closed=view.closed,
            score=attempt.score,
            total=attempt.total,
            questions=[
                QuizQuestionPublic(
                    id=q.position,
                    prompt=q.prompt,
                    code=q.code or None,
                    item=q.item_slug,
                    choices=[
                        ChoicePublic(id=c.letter, text=c.text, correct=c.correct, why=c.why)
                        for c in q.choices
                    ],
                    answer=q.answer,
                    correct=q.correct,
                    seconds=q.seconds,
                )
                for q in view.questions
            ],
        )


class AnswerCreate(BaseModel):
    question_id: int = Field(ge=1, le=MAX_QUESTIONS)
    choice_id: str = Field(min_length=1, max_length=1)
