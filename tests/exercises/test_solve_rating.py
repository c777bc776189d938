"""The rating of one solve of a code exercise (app/exercises/solve_rating.py): the table in
rate_solve's docstring, row by row, and its thresholds per difficulty."""

from __future__ import annotations

import pytest

from app.exercises.solve_rating import AGAIN, EASY, GOOD, HARD, PACES, Solve, rate_solve

MINUTE = 60


@pytest.mark.parametrize(
    ("solve", "rating"),
    [
        (Solve(attempts=1, hints=0, seconds=2 * MINUTE), EASY),  # first try, no hint, quick
        (Solve(attempts=2, hints=0, seconds=8 * MINUTE), GOOD),
        (Solve(attempts=3, hints=0, seconds=8 * MINUTE), GOOD),
        (Solve(attempts=1, hints=1, seconds=2 * MINUTE), GOOD),  # a hint is never Easy
        (Solve(attempts=1, hints=0, seconds=20 * MINUTE), GOOD),  # right first, but slowly
        (Solve(attempts=4, hints=0, seconds=8 * MINUTE), HARD),  # more tries
        (Solve(attempts=2, hints=2, seconds=8 * MINUTE), HARD),  # more hints
        (Solve(attempts=2, hints=0, seconds=45 * MINUTE), HARD),  # slow
        (Solve(attempts=1, hints=0, seconds=MINUTE, revealed=True), AGAIN),
        (Solve(attempts=9, hints=3, seconds=99 * MINUTE, revealed=True), AGAIN),
    ],
)
def test_a_medium_solve_rates_by_tries_hints_and_time(solve: Solve, rating: int) -> None:
    assert rate_solve(solve, "medium") == rating


def test_thresholds_grow_with_the_difficulty() -> None:
    twelve_minutes = Solve(attempts=1, hints=0, seconds=12 * MINUTE)
    assert [rate_solve(twelve_minutes, d) for d in ("easy", "medium", "hard")] == [
        GOOD,
        GOOD,
        EASY,
    ]
    four_tries = Solve(attempts=4, hints=0, seconds=10 * MINUTE)
    assert [rate_solve(four_tries, d) for d in ("easy", "medium", "hard")] == [HARD, HARD, GOOD]
    two_hints = Solve(attempts=2, hints=2, seconds=10 * MINUTE)
    assert [rate_solve(two_hints, d) for d in ("easy", "medium", "hard")] == [HARD, HARD, GOOD]
    three_tries = Solve(attempts=3, hints=0, seconds=10 * MINUTE)
    assert rate_solve(three_tries, "easy") == HARD and rate_solve(three_tries, "medium") == GOOD


def test_the_edges_of_each_threshold_are_inclusive() -> None:
    for difficulty, pace in PACES.items():
        quick = Solve(attempts=1, hints=0, seconds=pace.quick_seconds)
        assert rate_solve(quick, difficulty) == EASY
        just_over = Solve(attempts=1, hints=0, seconds=pace.quick_seconds + 1)
        assert rate_solve(just_over, difficulty) == GOOD
        slow = Solve(attempts=pace.good_attempts, hints=pace.good_hints, seconds=pace.slow_seconds)
        assert rate_solve(slow, difficulty) == GOOD
        slower = Solve(attempts=2, hints=0, seconds=pace.slow_seconds + 1)
        assert rate_solve(slower, difficulty) == HARD


def test_an_unknown_difficulty_is_paced_as_medium() -> None:
    solve = Solve(attempts=3, hints=1, seconds=30 * MINUTE)
    assert rate_solve(solve, "unheard-of") == rate_solve(solve, "medium") == GOOD
