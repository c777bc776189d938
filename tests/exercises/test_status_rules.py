"""One exercise's status from its events, in the order they happened."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from app.exercises.status import standing

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_statuses() -> None:
    assert standing([]) == "new"
    assert standing([("try", at(0))]) == "attempted"
    assert standing([("hint", at(0))]) == "attempted"
    assert standing([("try", at(0)), ("pass", at(5))]) == "solved"
    assert standing([("hint", at(1)), ("pass", at(5))]) == "solved-with-hints"
    assert standing([("pass", at(5)), ("hint", at(6))]) == "solved"
    assert standing([("hint", at(1)), ("reveal", at(2)), ("pass", at(5))]) == (
        "solved-after-reveal"
    )
    # Only the first passing Submit counts: help before a later pass changes nothing.
    assert standing([("pass", at(1)), ("reveal", at(2)), ("pass", at(5))]) == "solved"
