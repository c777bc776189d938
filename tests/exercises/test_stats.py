"""Each exercise's figures for authors (app/exercises/stats.py) and the flag of a
flaky or wrong hidden test (app/exercises/flaky_tests.py), from submissions, hints and
reveals written straight into the database."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.exercises.stats import ExerciseStats, exercise_stats
from app.models import HintView, Learner, SolutionReveal
from tests.support.paths import EXERCISE_COUNT
from tests.support.submissions import (
    FIRST_TRY,
    FIXED,
    REFORMATTED,
    START,
    add_submission,
)

SLUG = "stable-softmax"
HUGE, EMPTY, VISIBLE = "softmax of huge logits", "empty batch", "softmax of small rows"


def stats_of(engine: Engine, slug: str = SLUG) -> ExerciseStats:
    with Session(engine) as session:
        return next(s for s in exercise_stats(session) if s.slug == slug)


def test_without_submissions_every_exercise_is_listed_with_zeros(engine: Engine) -> None:
    with Session(engine) as session:
        stats = exercise_stats(session)
    assert len(stats) == EXERCISE_COUNT
    assert [s.position for s in stats] == sorted(s.position for s in stats)
    assert all(s.tried == 0 and s.solve_rate is None and not s.flagged for s in stats)
    assert all(s.median_submits_to_solve is None and s.failing_tests == [] for s in stats)


def test_solve_rate_and_medians_follow_each_person(engine: Engine) -> None:
    with Session(engine) as session:
        learner = Learner(visitor="guest-cookie")
        session.add(learner)
        session.flush()
        assert learner.id is not None
        # alice: a run of the visible tests, a failing submit, then a pass 5 minutes in.
        add_submission(session, slug=SLUG, visitor="alice", minutes=0, mode="run")
        add_submission(session, slug=SLUG, visitor="alice", minutes=1, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor="alice", minutes=5, code=FIXED)
        # a learner (two visitor keys, one person): three submits, solved 100 s after the first.
        by_learner = partial(add_submission, session, slug=SLUG, learner_id=learner.id)
        by_learner(visitor="b1", minutes=10, failing=(HUGE,))
        by_learner(visitor="b2", minutes=10.5, failing=(HUGE,), code="x")
        by_learner(visitor="b1", minutes=10 + 100 / 60, code=FIXED)
        by_learner(visitor="b1", minutes=20, failing=(HUGE,))  # after the solve
        # carol never passes; dave only ran the visible tests; erin's submit was never graded.
        add_submission(session, slug=SLUG, visitor="carol", minutes=3, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor="dave", minutes=3, mode="run")
        add_submission(session, slug=SLUG, visitor="erin", minutes=4, graded=False)
        # Another exercise's submission counts only there.
        add_submission(session, slug="clip-grad-norm", visitor="alice", minutes=2)
        session.commit()
    stats = stats_of(engine)
    assert (stats.tried, stats.submitted, stats.solved) == (5, 3, 2)
    assert stats.solve_rate == 2 / 3
    assert stats.median_submits_to_solve == 2.5  # 2 (alice) and 3 (the learner)
    # alice: 5 minutes from her first run; the learner: 100 s from the first submit.
    assert stats.median_seconds_to_solve == (300 + 100) / 2
    (huge, *others) = stats.failing_tests
    assert (huge.name, huge.category, huge.hidden) == (HUGE, "edge cases", True)
    assert (huge.failing, huge.graded) == (5, 7)  # of the seven graded submits
    assert others == []  # the test every submit passed is not listed
    assert stats_of(engine, "clip-grad-norm").solved == 1


def test_hints_count_people_per_hint_and_reveals_count_people(engine: Engine) -> None:
    with Session(engine) as session:
        for visitor, index, level in [
            ("alice", 0, "concept"),
            ("alice", 1, "approach"),
            ("bob", 0, "concept"),
            ("carol", 0, "concept"),
        ]:
            session.add(
                HintView(
                    exercise_slug=SLUG,
                    visitor=visitor,
                    hint_index=index,
                    level=level,
                    category="edge cases",
                )
            )
        for visitor, minutes in [("carol", 0), ("carol", 9), ("dave", 1)]:
            session.add(
                SolutionReveal(
                    exercise_slug=SLUG,
                    visitor=visitor,
                    revealed_at=START + timedelta(minutes=minutes),
                )
            )
        session.commit()
    stats = stats_of(engine)
    assert [(h.hint_index, h.level, h.people) for h in stats.hints] == [
        (0, "concept", 3),
        (1, "approach", 1),
    ]
    assert stats.hint_people == 3
    assert stats.reveals == 2  # carol twice, dave once
    assert stats_of(engine, "clip-grad-norm").hints == []


def test_the_same_program_passing_a_failed_hidden_test_raises_the_flag(engine: Engine) -> None:
    with Session(engine) as session:
        alice = partial(add_submission, session, slug=SLUG, visitor="alice")
        failed = alice(minutes=0, failing=(HUGE, EMPTY))
        # Formatting, a docstring and a comment differ, so the bytes do: the program does not.
        passed = alice(minutes=2, code=REFORMATTED, failing=(EMPTY,))
        # Byte-identical code failing then passing is a case too.
        again = add_submission(session, slug=SLUG, visitor="bob", minutes=0, failing=(HUGE,))
        then = add_submission(session, slug=SLUG, visitor="bob", minutes=1)
        session.commit()
    stats = stats_of(engine)
    assert stats.flagged
    cases = {(c.failed_run, c.passed_run): c.tests for c in stats.flaky_cases}
    # alice's second submit failed "empty batch" again: only the test that passed is named.
    assert cases == {(failed, passed): [HUGE], (again, then): [HUGE]}
    assert stats.flaky_tests == [HUGE]
    # Shown again, the shapes come from the cache: the same cases.
    assert stats_of(engine).flaky_cases == stats.flaky_cases


def test_a_fix_a_visible_test_or_no_pass_leaves_the_flag_down(engine: Engine) -> None:
    with Session(engine) as session:
        # alice changed an expression between the failing and the passing submit.
        add_submission(session, slug=SLUG, visitor="alice", minutes=0, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor="alice", minutes=1, code=FIXED)
        # bob's same code failed and passed a visible test: the learner saw that one.
        add_submission(session, slug=SLUG, visitor="bob", minutes=0, failing=(VISIBLE,))
        add_submission(session, slug=SLUG, visitor="bob", minutes=1)
        # carol's same code failed twice; dave's pass came from someone else's failure.
        add_submission(session, slug=SLUG, visitor="carol", minutes=0, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor="carol", minutes=1, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor="dave", minutes=2)
        # erin's code that does not parse proves nothing, even unchanged in shape.
        add_submission(session, slug=SLUG, visitor="erin", minutes=0, failing=(HUGE,), code="def (")
        add_submission(session, slug=SLUG, visitor="erin", minutes=1, code="def ( ")
        session.commit()
    stats = stats_of(engine)
    assert not stats.flagged and stats.flaky_cases == []
    assert FIRST_TRY != FIXED
