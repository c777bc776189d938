"""How well a solve of a code exercise went, as an FSRS rating: the rule alone, with no
database, so that it can be read and tested as a table."""

from __future__ import annotations

from dataclasses import dataclass

AGAIN, HARD, GOOD, EASY = 1, 2, 3, 4


@dataclass(frozen=True)
class Pace:
    """What one difficulty allows: a solve within `quick_seconds` on the first submit may
    rate Easy; within `slow_seconds`, `good_attempts` submits and `good_hints` hints, Good."""

    quick_seconds: int
    slow_seconds: int
    good_attempts: int
    good_hints: int


# Harder exercises take longer and more tries before a solve counts as laboured.
PACES = {
    "easy": Pace(quick_seconds=5 * 60, slow_seconds=20 * 60, good_attempts=2, good_hints=1),
    "medium": Pace(quick_seconds=10 * 60, slow_seconds=40 * 60, good_attempts=3, good_hints=1),
    "hard": Pace(quick_seconds=20 * 60, slow_seconds=60 * 60, good_attempts=4, good_hints=2),
}


@dataclass(frozen=True)
class Solve:
    """One solve: the submits it took (the passing one included), the hints shown, the
    seconds from its first submission to the pass, and whether the solution was revealed."""

    attempts: int
    hints: int
    seconds: int
    revealed: bool = False


def rate_solve(solve: Solve, difficulty: str) -> int:
    """The solve's rating, first rule that holds:

    ===============================================================  ===========
    the solve                                                         rating
    ===============================================================  ===========
    the solution was revealed during it                               Again (1)
    passed on the first submit, no hint, within `quick_seconds`       Easy (4)
    at most `good_attempts` submits and `good_hints` hints, within    Good (3)
    `slow_seconds`
    anything else: more tries, more hints, or slower                  Hard (2)
    ===============================================================  ===========

    Thresholds per difficulty (PACES): easy 5 min / 20 min, 2 submits, 1 hint; medium
    10 / 40 min, 3 submits, 1 hint; hard 20 / 60 min, 4 submits, 2 hints. An unknown
    difficulty is paced as medium.
    """
    pace = PACES.get(difficulty, PACES["medium"])
    if solve.revealed:
        return AGAIN
    if solve.attempts <= 1 and solve.hints == 0 and solve.seconds <= pace.quick_seconds:
        return EASY
    if (
        solve.attempts <= pace.good_attempts
        and solve.hints <= pace.good_hints
        and solve.seconds <= pace.slow_seconds
    ):
        return GOOD
    return HARD
