"""Merging a guest into an account carries its hints shown and its reveals, keeping the
earlier of two rows for the same hint or exercise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.accounts import merge
from app.models import HintView, Learner, SolutionReveal

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def hint(learner: Learner, visitor: str, index: int, minutes: int) -> HintView:
    return HintView(
        exercise_slug="stable-softmax",
        learner_id=learner.id,
        visitor=visitor,
        hint_index=index,
        level="concept",
        category="values",
        shown_at=T0 + timedelta(minutes=minutes),
    )


def test_merge_keeps_each_hint_and_reveal_once_the_earlier(engine: Engine) -> None:
    with Session(engine) as session:
        guest, own = Learner(visitor="guest-v"), Learner(visitor="own-v")
        session.add_all([guest, own])
        session.flush()
        session.add_all(
            [
                hint(own, "user:1", 0, minutes=10),
                hint(guest, "guest-v", 0, minutes=5),  # earlier: kept
                hint(guest, "guest-v", 1, minutes=6),
                SolutionReveal(
                    exercise_slug="stable-softmax",
                    learner_id=own.id,
                    visitor="user:1",
                    revealed_at=T0,
                ),
                SolutionReveal(
                    exercise_slug="stable-softmax",
                    learner_id=guest.id,
                    visitor="guest-v",
                    revealed_at=T0 + timedelta(hours=1),
                ),
            ]
        )
        session.flush()
        merge.merge(session, source=guest, target=own)
        session.commit()
        hints = session.exec(select(HintView).order_by(HintView.hint_index)).all()
        assert [(h.hint_index, h.learner_id, h.visitor) for h in hints] == [
            (0, own.id, "guest-v"),
            (1, own.id, "guest-v"),
        ]
        assert hints[0].shown_at.replace(tzinfo=UTC) == T0 + timedelta(minutes=5)
        reveals = session.exec(select(SolutionReveal)).all()
        assert [(r.learner_id, r.visitor) for r in reveals] == [(own.id, "user:1")]
