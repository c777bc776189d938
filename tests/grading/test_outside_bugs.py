"""The suites against bugs their authors did not write: tests/grading/outside_bugs/<slug>/
holds realistic bugs (two or three per exercise, 170 in all) written by reviewers who had not
read the authored mutants, each a copy of the reference with one bug, its first line saying
what.

Each must fail a hidden test on every one of seeds 0-4, except the escapes listed below,
which no check catches yet: the list only shrinks (a listed bug that is now caught fails this
test until it is taken off), so it is the record of what the grader still lets through."""

from __future__ import annotations

import pytest

from app.settings import PROJECT_ROOT
from sandbox.grading.exercise import Exercise
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import TestStatus

BUGS = PROJECT_ROOT / "tests" / "grading" / "outside_bugs"
SEEDS = (0, 1, 2, 3, 4)
# slug/bug -> the check that would catch it.
KNOWN_ESCAPES: dict[str, str] = {}


def bugs() -> list[str]:
    return sorted(f"{p.parent.name}/{p.stem}" for p in BUGS.glob("*/*.py"))


def test_the_escapes_listed_are_bugs_on_file() -> None:
    assert set(KNOWN_ESCAPES) <= set(bugs())
    assert len(bugs()) >= 90


@pytest.mark.parametrize("bug", bugs())
def test_an_outside_bug_fails_a_hidden_test_on_every_seed(
    bug: str, loaded: dict[str, Exercise]
) -> None:
    slug, _ = bug.split("/")
    exercise = loaded[slug]
    code = (BUGS / f"{bug}.py").read_text(encoding="utf-8")
    assert code.startswith("# Bug: ")
    caught = []
    for seed in SEEDS:
        report = grade_in_process(exercise, code, seed=seed)
        if any(t.hidden and t.status is not TestStatus.PASS for t in report.tests):
            caught.append(seed)
    if bug in KNOWN_ESCAPES:
        assert len(caught) < len(SEEDS), f"{bug} is caught now: take it off KNOWN_ESCAPES"
    else:
        assert caught == list(SEEDS), f"{bug} escapes on seeds {sorted(set(SEEDS) - set(caught))}"
