"""A small question bank of its own for quiz tests: every explanation is marked, so a test
can tell whether anything of a key reached a response before it should."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Choice, Item, Question

SECRET = "WHY-SECRET"  # in every explanation
KEY_TEXT = "the right one"


def add_bank(engine: Engine, *, deck: str = "pytorch-essentials", per_item: int = 1) -> int:
    """One marked question per item of `deck` (after any already there); how many."""
    added = 0
    with Session(engine) as session:
        for item in session.exec(select(Item).where(Item.deck_slug == deck)):
            taken = {
                q.position
                for q in session.exec(select(Question).where(Question.item_id == item.id))
            }
            for n in range(per_item):
                position = max(taken, default=0) + 1 + n
                question = Question(
                    item_id=item.id,  # type: ignore[arg-type]
                    position=position,
                    prompt=f"Test question {item.number}.{position}?",
                    model_answer="A model answer.",
                    key_points="first point\nsecond point",
                )
                session.add(question)
                session.flush()
                for k, (text, correct) in enumerate(
                    [("a wrong one", False), (KEY_TEXT, True), ("another wrong one", False)],
                    start=1,
                ):
                    session.add(
                        Choice(
                            question_id=question.id,  # type: ignore[arg-type]
                            position=k,
                            text=f"{text} ({item.number}.{position})",
                            correct=correct,
                            why=f"{SECRET} {k}",
                        )
                    )
                added += 1
        session.commit()
    return added
