"""Authoring insight for code exercises: who tried each, how many solved it and how fast,
which tests fail most, which hints are used, how often the solution is revealed, and
whether a hidden test looks flaky or wrong (flaky_tests).

A person is a learner (guest or account), or a cookie-less client by its owner key. The
runs are read in one ordered pass, because the figures follow each person's submissions in
time; the hints and reveals are counted by the database."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import String, case, cast, distinct, func
from sqlalchemy import select as core_select
from sqlmodel import Session, col

from app.exercises.flaky_tests import FlakyCase, GradedSubmit, confirm, report_tests
from app.models import Exercise, HintView, Run, SolutionReveal

MOST_FAILING = 5  # tests listed per exercise
SUBMIT, PASSED = "submit", "passed"


@dataclass(frozen=True)
class FailingTest:
    name: str
    category: str
    hidden: bool
    failing: int  # graded submits that did not pass it
    graded: int  # graded submits that ran it

    @property
    def share(self) -> float:
        return self.failing / self.graded


@dataclass(frozen=True)
class HintUse:
    hint_index: int
    level: str
    people: int


@dataclass
class ExerciseStats:
    slug: str
    title: str
    position: int
    tried: int = 0  # people with a submission of either mode
    submitted: int = 0  # people with a graded submit
    solved: int = 0  # people with a passing submit
    median_submits_to_solve: float | None = None
    median_seconds_to_solve: float | None = None
    failing_tests: list[FailingTest] = field(default_factory=list)
    hints: list[HintUse] = field(default_factory=list)
    hint_people: int = 0  # people who were shown any hint
    reveals: int = 0  # people who revealed the solution
    flaky_cases: list[FlakyCase] = field(default_factory=list)

    @property
    def solve_rate(self) -> float | None:
        return self.solved / self.submitted if self.submitted else None

    @property
    def flagged(self) -> bool:
        return bool(self.flaky_cases)

    @property
    def flaky_tests(self) -> list[str]:
        return sorted({name for case_ in self.flaky_cases for name in case_.tests})


@dataclass
class _Trail:
    """One person's submissions to one exercise, followed in time."""

    first_at: datetime
    submits: int = 0  # graded submits up to the first pass
    solved_at: datetime | None = None
    last_submit: GradedSubmit | None = None


@dataclass
class _TestCount:
    category: str
    hidden: bool
    failing: int = 0
    graded: int = 0


@dataclass
class _Tally:
    """What one exercise's runs add up to while they are read."""

    trails: dict[tuple[str, str], _Trail] = field(default_factory=dict)
    tests: dict[str, _TestCount] = field(default_factory=dict)  # by the test's name
    pairs: list[tuple[GradedSubmit, GradedSubmit]] = field(default_factory=list)


def exercise_stats(session: Session) -> list[ExerciseStats]:
    """Every exercise's figures, in the set's order."""
    stats = {
        slug: ExerciseStats(slug, title, position)
        for slug, title, position in session.execute(
            core_select(col(Exercise.slug), col(Exercise.title), col(Exercise.position)).order_by(
                col(Exercise.position)
            )
        )
    }
    tallies = _read_runs(session, set(stats))
    pairs = [pair for tally in tallies.values() for pair in tally.pairs]
    flaky: dict[str, list[FlakyCase]] = defaultdict(list)
    slug_of = {after.run_id: slug for slug, tally in tallies.items() for _, after in tally.pairs}
    for found in confirm(session, pairs):
        flaky[slug_of[found.passed_run]].append(found)
    for slug, tally in tallies.items():
        _fill(stats[slug], tally)
        stats[slug].flaky_cases = flaky[slug]
    _add_hints(session, stats)
    _add_reveals(session, stats)
    return list(stats.values())


def _read_runs(session: Session, slugs: set[str]) -> dict[str, _Tally]:
    # Only a submit's report is needed: a run-mode report would be read and thrown away.
    report = case((col(Run.grading_mode) == SUBMIT, col(Run.grading)), else_=None)
    rows = session.execute(
        core_select(
            col(Run.id),
            col(Run.exercise_slug),
            col(Run.learner_id),
            col(Run.visitor),
            col(Run.grading_mode),
            col(Run.grading_verdict),
            col(Run.created_at),
            col(Run.code_sha256),
            report,
        )
        .where(col(Run.exercise_slug).is_not(None))
        .order_by(col(Run.created_at), col(Run.id))
    )
    tallies: dict[str, _Tally] = {}
    for run_id, slug, learner_id, visitor, mode, verdict, created_at, sha, grading in rows:
        if slug not in slugs:
            continue  # an exercise since removed from the content
        tally = tallies.setdefault(slug, _Tally())
        person = ("learner", str(learner_id)) if learner_id is not None else ("visitor", visitor)
        trail = tally.trails.setdefault(person, _Trail(first_at=created_at))
        if mode != SUBMIT or verdict is None:
            continue  # a run of the visible tests, or a submit that was never graded
        submit = GradedSubmit(run_id, sha, report_tests(grading))
        _count_tests(tally, submit)
        if trail.solved_at is None:
            trail.submits += 1
            if verdict == PASSED:
                trail.solved_at = created_at
        if trail.last_submit is not None:
            tally.pairs.append((trail.last_submit, submit))
        trail.last_submit = submit
    return tallies


def _count_tests(tally: _Tally, submit: GradedSubmit) -> None:
    for test in submit.tests:
        count = tally.tests.setdefault(
            test["name"], _TestCount(str(test.get("category", "")), bool(test.get("hidden")))
        )
        count.failing += test.get("status") != "pass"
        count.graded += 1


def _fill(stats: ExerciseStats, tally: _Tally) -> None:
    trails = tally.trails.values()
    solves = [t for t in trails if t.solved_at is not None]
    stats.tried = len(tally.trails)
    stats.submitted = sum(1 for t in trails if t.last_submit is not None)
    stats.solved = len(solves)
    if solves:
        stats.median_submits_to_solve = statistics.median(t.submits for t in solves)
        stats.median_seconds_to_solve = statistics.median(
            (t.solved_at - t.first_at).total_seconds() for t in solves if t.solved_at
        )
    failing = [
        FailingTest(name, c.category, c.hidden, c.failing, c.graded)
        for name, c in tally.tests.items()
        if c.failing
    ]
    failing.sort(key=lambda t: (-t.share, -t.failing, t.name))
    stats.failing_tests = failing[:MOST_FAILING]


def _person(learner_id: Any, visitor: Any) -> Any:
    """One text per person in SQL: the learner's id, or the visitor key (prefixed, so the
    two never meet)."""
    return func.coalesce(cast(learner_id, String), "v:" + visitor)


def _add_hints(session: Session, stats: dict[str, ExerciseStats]) -> None:
    # Folded here rather than counted twice by the database: people per hint, and people
    # shown any hint of the exercise, from one read (a row per person and hint at most).
    per_hint: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    per_exercise: dict[str, set[str]] = defaultdict(set)
    person = _person(col(HintView.learner_id), col(HintView.visitor))
    for slug, index, level, who in session.execute(
        core_select(
            col(HintView.exercise_slug), col(HintView.hint_index), col(HintView.level), person
        ).distinct()
    ):
        per_hint[(slug, index, level)].add(who)
        per_exercise[slug].add(who)
    for (slug, index, level), people in sorted(per_hint.items()):
        if slug in stats:
            stats[slug].hints.append(HintUse(index, level, len(people)))
    for slug, people in per_exercise.items():
        if slug in stats:
            stats[slug].hint_people = len(people)


def _add_reveals(session: Session, stats: dict[str, ExerciseStats]) -> None:
    person = _person(col(SolutionReveal.learner_id), col(SolutionReveal.visitor))
    for slug, people in session.execute(
        core_select(col(SolutionReveal.exercise_slug), func.count(distinct(person))).group_by(
            col(SolutionReveal.exercise_slug)
        )
    ):
        if slug in stats:
            stats[slug].reveals = people


# What the table sorts by: a column's name → its value (None sorts last either way).
SORT_KEYS: dict[str, Callable[[ExerciseStats], float | None]] = {
    "exercise": lambda s: s.position,
    "tried": lambda s: s.tried,
    "solve_rate": lambda s: s.solve_rate,
    "submits": lambda s: s.median_submits_to_solve,
    "time": lambda s: s.median_seconds_to_solve,
    "hints": lambda s: s.hint_people,
    "reveals": lambda s: s.reveals,
    "flag": lambda s: len(s.flaky_cases),
}


def sorted_stats(stats: list[ExerciseStats], *, by: str, descending: bool) -> list[ExerciseStats]:
    """`stats` ordered by one column; ties and missing values keep the set's order."""
    value = SORT_KEYS[by]
    # sorted() is stable, reversed too: ties stay in the set's order.
    known = [(v, s) for s in stats if (v := value(s)) is not None]
    known.sort(key=lambda pair: pair[0], reverse=descending)
    return [s for _, s in known] + [s for s in stats if value(s) is None]
