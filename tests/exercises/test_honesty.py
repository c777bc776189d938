"""Each exercise's tests are honest: the reference passes every test with five different
seeds, the starter fails at least one, and every mutant (one classic bug each) fails at
least one hidden test.

This full matrix runs with the trusted in-process runner (sandbox/grading/trusted.py): the
same grading loop as the jailed grader, with our own code on the learner's side. The jailed
two-process path is proven on a sample in tests/sandbox/test_grading_jail.py."""

from __future__ import annotations

import pytest

from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import GradingVerdict, TestStatus
from tests.exercises.conftest import exercise_folders

SEEDS = (0, 1, 2, 3, 4)
NAMES = [p.name for p in exercise_folders()]


@pytest.mark.parametrize("slug", NAMES)
def test_the_reference_passes_every_test_with_five_seeds(
    slug: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    for seed in SEEDS:
        report = grade_in_process(exercise, exercise.reference, seed=seed)
        failing = [(t.name, t.message) for t in report.tests if t.status is not TestStatus.PASS]
        assert report.verdict is GradingVerdict.PASSED, (seed, failing)
        assert report.score == 100.0


@pytest.mark.parametrize("slug", NAMES)
def test_the_starter_fails(slug: str, loaded: dict[str, Exercise]) -> None:
    exercise = loaded[slug]
    report = grade_in_process(exercise, exercise.starter, seed=0)
    assert report.verdict is not GradingVerdict.PASSED


@pytest.mark.parametrize(
    ("slug", "mutant"),
    [(p.name, m.stem) for p in exercise_folders() for m in sorted(p.glob("mutants/*.py"))],
)
def test_every_mutant_fails_a_hidden_test(
    slug: str, mutant: str, loaded: dict[str, Exercise]
) -> None:
    exercise = loaded[slug]
    report = grade_in_process(exercise, exercise.mutants[mutant], seed=0)
    caught = [t.name for t in report.tests if t.hidden and t.status is not TestStatus.PASS]
    assert caught, f"no hidden test catches the mutant {mutant}"
