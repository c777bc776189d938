"""The review queue's order (app/interview/review_queue.py): due exercises spread among
due questions, at least one every few questions, never all at the end."""

from __future__ import annotations

import pytest

from app.interview.review_queue import EVERY, interleave


def shape(questions: int, exercises: int) -> str:
    merged = interleave([f"q{i}" for i in range(questions)], [f"e{i}" for i in range(exercises)])
    return "".join(x[0] for x in merged)


@pytest.mark.parametrize(
    ("questions", "exercises", "order"),
    [
        (0, 0, ""),
        (5, 0, "qqqqq"),
        (0, 2, "ee"),
        (1, 1, "eq"),
        (2, 1, "qeq"),
        (7, 1, "qqqeqqqq"),  # after every few questions, not after the last
        (9, 3, "qqeqqeqqeqqq"),  # spread evenly
        (30, 2, "qqqeqqqeqqqqqqqqqqqqqqqqqqqqqqqq"),
        (2, 4, "eeqeeq"),  # more exercises than questions: several together
    ],
)
def test_exercises_are_spread_among_the_questions(
    questions: int, exercises: int, order: str
) -> None:
    assert shape(questions, exercises) == order


@pytest.mark.parametrize("questions", range(1, 40))
@pytest.mark.parametrize("exercises", range(1, 6))
def test_every_item_appears_once_in_its_own_order_and_none_waits_too_long(
    questions: int, exercises: int
) -> None:
    qs, es = [f"q{i}" for i in range(questions)], [f"e{i}" for i in range(exercises)]
    merged = interleave(qs, es)
    assert [x for x in merged if x[0] == "q"] == qs and [x for x in merged if x[0] == "e"] == es
    assert merged[-1][0] == "q"  # with questions left, an exercise is never last
    run = longest = 0
    for x in merged[: merged.index(es[-1])]:
        run = run + 1 if x[0] == "q" else 0
        longest = max(longest, run)
    assert longest <= EVERY
