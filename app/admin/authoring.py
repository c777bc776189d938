"""Authoring insight: how each question performs across every learner's closed quizzes.
The share who answer it right, its discrimination (do learners who do well overall get it
right more often: the point-biserial correlation between this question and the rest of the
quiz), and how often each option is picked. Flags distractors nobody picks and questions
most people miss."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import select as core_select
from sqlmodel import Session, col

from app.models import AttemptQuestion, Choice, Item, Question, QuizAttempt

MIN_ANSWERS_TO_FLAG = 5  # below this, shares say little
MISSED_BY_MOST = 0.35  # a question fewer than this share gets right


@dataclass
class OptionStats:
    text: str
    correct: bool
    picks: int = 0


@dataclass
class QuestionStats:
    question_id: int
    prompt: str
    item_slug: str
    answers: int = 0
    right: int = 0
    discrimination: float | None = None
    options: list[OptionStats] = field(default_factory=list)

    @property
    def share_right(self) -> float | None:
        return self.right / self.answers if self.answers else None

    @property
    def unpicked(self) -> list[str]:
        if self.answers < MIN_ANSWERS_TO_FLAG:
            return []
        return [o.text for o in self.options if not o.correct and o.picks == 0]

    @property
    def missed_by_most(self) -> bool:
        share = self.share_right
        return self.answers >= MIN_ANSWERS_TO_FLAG and share is not None and share < MISSED_BY_MOST


def question_stats(session: Session) -> list[QuestionStats]:
    """Every question with its figures, the most troubling first."""
    stats: dict[int, QuestionStats] = {}
    for qid, prompt, slug in session.execute(
        core_select(col(Question.id), col(Question.prompt), col(Item.slug))
        .join(Item, col(Item.id) == col(Question.item_id))
        .order_by(col(Item.deck_slug), col(Item.number), col(Question.position))
    ):
        stats[qid] = QuestionStats(qid, prompt, slug)
    choices: dict[int, OptionStats] = {}
    for cid, qid, text, correct in session.execute(
        core_select(
            col(Choice.id), col(Choice.question_id), col(Choice.text), col(Choice.correct)
        ).order_by(col(Choice.question_id), col(Choice.position))
    ):
        choices[cid] = OptionStats(text, correct)
        stats[qid].options.append(choices[cid])
    # Answered questions of closed quizzes: (attempt, question, chosen, right).
    rows = session.execute(
        core_select(
            col(AttemptQuestion.attempt_id),
            col(AttemptQuestion.question_id),
            col(AttemptQuestion.choice_id),
            col(AttemptQuestion.correct),
        )
        .join(QuizAttempt, col(QuizAttempt.id) == col(AttemptQuestion.attempt_id))
        .where(col(QuizAttempt.closed_at).is_not(None), col(AttemptQuestion.choice_id).is_not(None))
    ).all()
    totals: dict[str, int] = defaultdict(int)
    for attempt_id, _, _, right in rows:
        totals[attempt_id] += bool(right)
    pairs: dict[int, list[tuple[bool, int]]] = defaultdict(list)
    for attempt_id, qid, chosen, right in rows:
        if qid not in stats:
            continue
        stats[qid].answers += 1
        stats[qid].right += bool(right)
        if chosen in choices:
            choices[chosen].picks += 1
        pairs[qid].append((bool(right), totals[attempt_id] - bool(right)))
    for qid, answered in pairs.items():
        stats[qid].discrimination = _point_biserial(answered)
    return sorted(
        stats.values(),
        key=lambda s: (not s.missed_by_most, not s.unpicked, -s.answers, s.question_id),
    )


def _point_biserial(pairs: list[tuple[bool, int]]) -> float | None:
    """Correlation between getting this question right and the score on the rest."""
    n = len(pairs)
    if n < 2:
        return None
    rest = [r for _, r in pairs]
    mean = sum(rest) / n
    spread = math.sqrt(sum((r - mean) ** 2 for r in rest) / n)
    right = [r for ok, r in pairs if ok]
    p = len(right) / n
    if spread == 0 or p in (0.0, 1.0):
        return None
    wrong = [r for ok, r in pairs if not ok]
    return (sum(right) / len(right) - sum(wrong) / len(wrong)) / spread * math.sqrt(p * (1 - p))
