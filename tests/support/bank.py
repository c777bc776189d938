"""A small question bank of its own for quiz tests: every explanation is marked, so a test
can tell whether anything of a key reached a response before it should."""

from __future__ import annotations

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Choice, Item, Question

SECRET = "WHY-SECRET"  # in every explanation
KEY_TEXT = "the right one"


def add_bank(engine: Engine, *, deck: str = "torch-compile", per_item: int = 1) -> int:
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


def add_model_answers(engine: Engine, slug: str) -> None:
    """A question for each prompt of one item (when the content has none yet)."""
    with Session(engine) as session:
        item = session.exec(select(Item).where(Item.slug == slug)).one()
        if session.exec(select(Question).where(Question.item_id == item.id)).first():
            return
        from app.models import QuizPrompt

        prompts = session.exec(select(QuizPrompt).where(QuizPrompt.item_id == item.id)).all()
        for prompt in prompts:
            question = Question(
                item_id=item.id,  # type: ignore[arg-type]
                position=prompt.position,
                prompt=prompt.text,
                model_answer=f"The model answer to {prompt.position}.",
                key_points="point one\npoint two\npoint three\npoint four",
            )
            session.add(question)
            session.flush()
            for k in (1, 2, 3):
                session.add(
                    Choice(
                        question_id=question.id,  # type: ignore[arg-type]
                        position=k,
                        text=f"option {k}",
                        correct=k == 1,
                        why=f"{SECRET} {k}",
                    )
                )
        session.commit()
