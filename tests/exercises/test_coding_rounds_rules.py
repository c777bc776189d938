"""The rules of coding rounds (app/exercises/coding_rounds.py) below the HTTP layer: which
exercises a deck and topics hold, the draw when everything was solved lately, when a round
counts as open, and the follow-up's key points."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.domain import InvalidInput, LearnerScope
from app.exercises import coding_review, coding_rounds, review
from app.exercises.coding_rounds import RoundView
from app.exercises.solve_rating import AGAIN
from app.models import Exercise, Item, Learner, Run

NOW = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


@pytest.fixture
def scope(engine: Engine) -> Iterator[LearnerScope]:
    with Session(engine) as session:
        learner = Learner(visitor="v" * 64)
        session.add(learner)
        session.flush()
        assert learner.id is not None
        yield LearnerScope(session, learner.id)


def solve(scope: LearnerScope, slug: str, *, at: datetime) -> None:
    scope.session.add(
        Run(
            id=slug[:32],
            visitor="v",
            learner_id=scope.learner_id,
            code_sha256="0" * 64,
            code_bytes=1,
            backend_requested="cpu",
            status="done",
            exercise_slug=slug,
            grading_mode="submit",
            grading_verdict="passed",
            created_at=at,
        )
    )
    scope.session.flush()


def test_a_deck_holds_the_exercises_drilling_its_items(scope: LearnerScope) -> None:
    session = scope.session
    by_deck = {e.slug for e in coding_rounds.candidates(session, deck="pytorch-essentials")}
    essentials = set(session.exec(select(Item.slug).where(Item.deck_slug == "pytorch-essentials")))
    for exercise in session.exec(select(Exercise)):
        assert (exercise.slug in by_deck) == bool(essentials & set(exercise.item_list))
    topic = coding_rounds.candidates(session, topics=("training",))
    assert topic and all(e.topic_slug == "training" for e in topic)
    both = coding_rounds.candidates(session, deck="deep-learning", topics=("training",))
    assert {e.slug for e in both} <= {e.slug for e in topic}
    with pytest.raises(InvalidInput, match="No code exercise"):
        coding_rounds.choose(scope, topics=("no-such-topic",), now=NOW)


def test_when_every_exercise_was_solved_lately_one_is_still_drawn(scope: LearnerScope) -> None:
    pool = [e.slug for e in coding_rounds.candidates(scope.session, topics=("regularization",))]
    for slug in pool:
        solve(scope, slug, at=NOW - timedelta(days=1))
    drawn = coding_rounds.choose(scope, topics=("regularization",), now=NOW, rng=random.Random(1))
    assert drawn.slug in pool
    # Solved long ago counts as fresh again.
    long_ago = NOW + timedelta(days=coding_rounds.RECENT_DAYS + 1)
    assert coding_rounds.recently_solved(scope.session, scope.learner_id, now=long_ago) == set()


def test_a_round_is_open_from_its_start_until_its_deadline_or_its_end(
    scope: LearnerScope,
) -> None:
    exercise = scope.session.exec(select(Exercise).order_by(col(Exercise.position))).first()
    assert exercise is not None
    waiting = coding_rounds.create(scope, exercise, start=False, now=NOW)
    session, learner = scope.session, scope.learner_id
    assert not coding_rounds.is_open(session, learner, exercise.slug, now=NOW)  # not started
    coding_rounds.begin(scope, waiting.id, now=NOW)
    assert coding_rounds.is_open(session, learner, exercise.slug, now=NOW)
    end = NOW + timedelta(minutes=coding_rounds.ROUND_MINUTES)
    assert coding_rounds.is_open(session, learner, exercise.slug, now=end - timedelta(seconds=1))
    assert not coding_rounds.is_open(session, learner, exercise.slug, now=end)
    coding_rounds.finish(scope, waiting.id, now=NOW + timedelta(minutes=1))
    assert not coding_rounds.is_open(session, learner, exercise.slug, now=NOW)
    with pytest.raises(InvalidInput, match="5 to 90 minutes"):
        coding_rounds.create(scope, exercise, minutes=4, start=True, now=NOW)


def test_the_follow_up_takes_only_its_own_key_points(scope: LearnerScope) -> None:
    exercise = scope.session.exec(select(Exercise).where(Exercise.slug == "stable-softmax")).one()
    found = coding_rounds.create(scope, exercise, start=True, now=NOW, rng=random.Random(0))
    view = coding_rounds.load(scope, found.id, now=NOW)
    assert view.followup is None and view.difficulty is None  # hidden while open
    view = coding_rounds.finish(scope, found.id, now=NOW + timedelta(minutes=3))
    assert view.followup is not None and view.difficulty == exercise.difficulty
    total = len(view.followup["key_points"])
    with pytest.raises(InvalidInput, match=f"key points 1 to {total}"):
        coding_rounds.grade_followup(scope, view, covered=[1, total + 1])
    assert coding_rounds.grade_followup(scope, view, covered=[2, 1, 2]) == (2, total)
    assert found.followup_covered == "1,2"
    assert view.outcome is not None and view.outcome.state == "none"


def graded_run(scope: LearnerScope, slug: str, *, passed: bool, at: datetime) -> Run:
    run = Run(
        id=f"{slug[:20]}{int(at.timestamp())}"[:32],
        visitor="v",
        learner_id=scope.learner_id,
        code_sha256="0" * 64,
        code_bytes=1,
        backend_requested="cpu",
        status="done",
        exercise_slug=slug,
        grading_mode="submit",
        grading_verdict="passed" if passed else "failed",
        score=100.0 if passed else 40.0,
        created_at=at,
        finished_at=at + timedelta(seconds=1),
    )
    scope.session.add(run)
    scope.session.flush()
    review.record_solve(scope.session, run)  # as the run's end records it
    return run


def closed_round(scope: LearnerScope, slug: str, run: Run | None, *, at: datetime) -> RoundView:
    exercise = scope.session.exec(select(Exercise).where(Exercise.slug == slug)).one()
    found = coding_rounds.create(scope, exercise, start=True, now=at)
    found.run_id = run.id if run else None
    return coding_rounds.finish(scope, found.id, now=at + timedelta(minutes=10))


def test_a_passed_round_is_its_solve_marked_as_the_mocks(scope: LearnerScope) -> None:
    run = graded_run(scope, "stable-softmax", passed=True, at=NOW + timedelta(minutes=5))
    view = closed_round(scope, "stable-softmax", run, at=NOW)
    event = coding_review.record_round(scope, view, at=NOW + timedelta(minutes=10))
    assert event is not None and event.source == "mock"
    log = review.events(scope, "stable-softmax")
    assert [(e.source, e.rating) for e in log] == [("mock", event.rating)]  # counted once
    assert review.card_of(scope, "stable-softmax") is not None


def test_a_failed_round_on_a_solved_exercise_is_a_lapse(scope: LearnerScope) -> None:
    graded_run(scope, "stable-softmax", passed=True, at=NOW - timedelta(days=30))
    before = review.card_of(scope, "stable-softmax")
    assert before is not None
    due_before = before.due
    failed = graded_run(scope, "stable-softmax", passed=False, at=NOW + timedelta(minutes=5))
    view = closed_round(scope, "stable-softmax", failed, at=NOW)
    event = coding_review.record_round(scope, view, at=NOW + timedelta(minutes=10))
    assert event is not None and (event.source, event.rating) == ("mock", AGAIN)
    after = review.card_of(scope, "stable-softmax")
    assert after is not None and after.due != due_before
    assert after.due.replace(tzinfo=UTC) < NOW + timedelta(days=3)  # due again soon


def test_a_round_on_an_exercise_never_solved_changes_nothing_unless_it_passes(
    scope: LearnerScope,
) -> None:
    view = closed_round(scope, "stable-softmax", None, at=NOW)  # nothing submitted
    assert coding_review.record_round(scope, view, at=NOW) is None
    failed = graded_run(scope, "inverted-dropout", passed=False, at=NOW)
    view = closed_round(scope, "inverted-dropout", failed, at=NOW)
    assert coding_review.record_round(scope, view, at=NOW) is None
    assert review.events(scope) == []
