"""Timed coding rounds: one exercise against the server's clock, inside a mock interview or
on its own (a "coding interview").

As in a timed quiz the server owns the clock: a round stores its deadline, a submission
after it is refused, and a round left open is closed at its deadline the next time anyone
reads it. The round's result is its last submit accepted before the deadline (graded by
the sandbox as any submission is). While a round is open its exercise's hints and solution
are refused (`is_open`), and a coding interview's difficulty is not shown until the end."""

from __future__ import annotations

import json
import random
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.db import database_now
from app.domain import DomainError, Identity, InvalidInput, LearnerScope, NotFound
from app.exercises.drafts import as_typed
from app.models import CodingRound, Exercise, Item, Run, aware
from app.platform import learners
from sandbox.protocol import Mode

ROUND_MINUTES = 20  # an interview's usual slot for one coding question
MIN_MINUTES, MAX_MINUTES = 5, 90
# An exercise solved this recently is remembered, not solved: another is drawn if any is left.
RECENT_DAYS = 14


class HelpDuringRound(DomainError):
    """A hint or the solution of the exercise a learner's coding round is on, asked while
    the round runs."""

    status = 409

    def __init__(self, what: str) -> None:
        super().__init__(
            f"Your coding round on this exercise is still running: its {what} opens when "
            "the round ends."
        )


class RoundNotFound(NotFound):
    def __init__(self, round_id: str) -> None:
        super().__init__(f"No coding round has the id '{round_id}'.")


class RoundClosed(DomainError):
    """A submission to a round that has ended (its time ran out, or it was finished)."""

    status = 409


class RoundNotStarted(DomainError):
    status = 409


def candidates(
    session: Session, *, deck: str | None = None, topics: tuple[str, ...] = ()
) -> list[Exercise]:
    """The exercises of a deck and topics: an exercise is in its own topic (as the
    Exercises page files it), and in the decks of the Q&A items it drills."""
    statement = select(Exercise).order_by(col(Exercise.position))
    if topics:
        statement = statement.where(col(Exercise.topic_slug).in_(topics))
    exercises = list(session.exec(statement))
    if not deck:
        return exercises
    in_deck = set(session.exec(select(Item.slug).where(Item.deck_slug == deck)))
    return [e for e in exercises if in_deck.intersection(e.item_list)]


def recently_solved(session: Session, learner_id: int, *, now: datetime) -> set[str]:
    since = now - timedelta(days=RECENT_DAYS)
    rows = session.exec(
        select(Run.exercise_slug).where(
            Run.learner_id == learner_id,
            Run.grading_mode == Mode.SUBMIT.value,
            Run.grading_verdict == "passed",
            col(Run.created_at) >= since,
        )
    )
    return {slug for slug in rows if slug}


def choose(
    scope: LearnerScope,
    *,
    deck: str | None = None,
    topics: tuple[str, ...] = (),
    now: datetime,
    rng: random.Random | None = None,
) -> Exercise:
    """One exercise of the deck and topics, at random, leaving out those the learner solved
    in the last RECENT_DAYS while others remain."""
    pool = candidates(scope.session, deck=deck, topics=topics)
    if not pool:
        raise InvalidInput(
            "No code exercise drills that deck and those topics: choose others, "
            "or leave the coding round out."
        )
    solved = recently_solved(scope.session, scope.learner_id, now=now)
    fresh = [e for e in pool if e.slug not in solved]
    return (rng or random.SystemRandom()).choice(fresh or pool)


def create(
    scope: LearnerScope,
    exercise: Exercise,
    *,
    minutes: int = ROUND_MINUTES,
    attempt_id: str | None = None,
    start: bool,
    now: datetime,
    rng: random.Random | None = None,
) -> CodingRound:
    """A round on `exercise` (not committed): started now, or (a mock interview's) when the
    learner reaches it. Its follow-up prompt is drawn now, so a reload never changes it."""
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise InvalidInput(f"A coding round lasts {MIN_MINUTES} to {MAX_MINUTES} minutes.")
    followups = exercise.followup_list
    found = CodingRound(
        id=secrets.token_hex(16),
        learner_id=scope.learner_id,
        attempt_id=attempt_id,
        exercise_slug=exercise.slug,
        minutes=minutes,
        created_at=now,
        followup_index=(rng or random.SystemRandom()).randrange(len(followups))
        if followups
        else None,
    )
    if start:
        _start(found, now)
    scope.session.add(found)
    scope.session.flush()
    return found


def _start(found: CodingRound, now: datetime) -> None:
    found.started_at = now
    found.deadline = now + timedelta(minutes=found.minutes)


def own_round(session: Session, learner_id: int, round_id: str, now: datetime) -> CodingRound:
    """The learner's round; one whose deadline passed is closed now (not committed).
    Someone else's round answers like no round at all."""
    found = session.get(CodingRound, round_id)
    if found is None or found.learner_id != learner_id:
        raise RoundNotFound(round_id)
    if found.closed_at is None and found.deadline is not None and now >= aware(found.deadline):
        found.closed_at = aware(found.deadline)
        session.add(found)
        session.flush()
    return found


def load(scope: LearnerScope, round_id: str, *, now: datetime) -> RoundView:
    return build_view(scope.session, own_round(scope.session, scope.learner_id, round_id, now), now)


def of_attempt(scope: LearnerScope, attempt_id: str, *, now: datetime) -> RoundView | None:
    """A mock interview's round, if it has one."""
    found = scope.session.exec(
        select(CodingRound).where(CodingRound.attempt_id == attempt_id)
    ).first()
    if found is None:
        return None
    try:
        return load(scope, found.id, now=now)
    except NotFound:  # its exercise left the content since: the mock goes on without it
        return None


def begin(scope: LearnerScope, round_id: str, *, now: datetime) -> RoundView:
    """Start a round that waited for the learner (a mock interview's): its clock runs from
    now. Starting it again changes nothing."""
    found = own_round(scope.session, scope.learner_id, round_id, now)
    if found.started_at is None:
        _start(found, now)
        scope.session.add(found)
        scope.session.flush()
    return build_view(scope.session, found, now)


def finish(scope: LearnerScope, round_id: str, *, now: datetime) -> RoundView:
    """End the round now, with its last submission (not committed); twice changes nothing."""
    found = own_round(scope.session, scope.learner_id, round_id, now)
    if found.started_at is None:
        raise RoundNotStarted("This coding round has not started yet.")
    if found.closed_at is None:
        found.closed_at = now
        scope.session.add(found)
        scope.session.flush()
    return build_view(scope.session, found, now)


# Submissions: checked and recorded in threads of the async submission handler, each in a
# session of its own (no connection is held while the run is queued).


def admit(engine: Engine, identity: Identity, round_id: str, *, now: datetime) -> str:
    """The exercise a submission to this round grades against, if the round takes one now.
    Blocking: call it in a thread."""
    with Session(engine) as session:
        scope = learners.resolve(session, identity)
        if scope is None:
            raise RoundNotFound(round_id)
        found = own_round(session, scope.learner_id, round_id, now)
        session.commit()  # a round closed at its deadline just now stays closed
        if found.started_at is None:
            raise RoundNotStarted("This coding round has not started yet: start it first.")
        if found.closed_at is not None:
            closed = aware(found.closed_at)
            raise RoundClosed(
                f"This coding round ended at {closed:%H:%M:%S} UTC, so that submission was "
                "not graded; your last submission before then is the round's result."
            )
        return found.exercise_slug


def record(engine: Engine, identity: Identity, round_id: str, *, run_id: str) -> None:
    """A submit was accepted for the round: it is now the round's graded submission.
    Blocking: call it in a thread."""
    with Session(engine) as session:
        scope = learners.resolve(session, identity)
        found = session.get(CodingRound, round_id)
        if scope is None or found is None or found.learner_id != scope.learner_id:
            raise RoundNotFound(round_id)
        found.run_id = run_id
        session.add(found)
        session.commit()


def is_open(
    session: Session, learner_id: int | None, slug: str, *, now: datetime | None = None
) -> bool:
    """Whether the learner has a started round on this exercise whose time has not run
    out: its hints and its solution wait until the round is over. A mock interview's round
    that has not started is not open: its exercise is not shown to the learner until then."""
    if learner_id is None:
        return False
    moment = now or database_now(session.connection())
    rows = session.exec(
        select(CodingRound.deadline).where(
            CodingRound.learner_id == learner_id,
            CodingRound.exercise_slug == slug,
            col(CodingRound.closed_at).is_(None),
            col(CodingRound.deadline).is_not(None),
        )
    )
    return any(deadline is not None and moment < aware(deadline) for deadline in rows)


def grade_followup(
    scope: LearnerScope, view: RoundView, *, covered: list[int]
) -> tuple[int, int] | None:
    """Keep the key points ticked for the round's follow-up (not committed): (ticked, total),
    or None when the round asked none."""
    followup = view.followup
    if followup is None:
        return None
    total = len(followup["key_points"])
    ticked = sorted({n for n in covered if 1 <= n <= total})
    if len(ticked) != len(set(covered)):
        raise InvalidInput(f"The follow-up has key points 1 to {total}.")
    view.round.followup_covered = ",".join(str(n) for n in ticked)
    scope.session.add(view.round)
    return len(ticked), total


def history(scope: LearnerScope, limit: int = 20) -> list[CodingRound]:
    """The learner's coding interviews (rounds of their own, outside a mock), newest first."""
    return list(
        scope.session.exec(
            select(CodingRound)
            .where(
                CodingRound.learner_id == scope.learner_id, col(CodingRound.attempt_id).is_(None)
            )
            .order_by(col(CodingRound.created_at).desc())
            .limit(limit)
        )
    )


# How a round is shown: the exercise, the clock, and once the round is over its graded
# submission, its difficulty and its follow-up. The difficulty and the follow-up are
# withheld while the round is open.


@dataclass(frozen=True)
class Outcome:
    """The graded submission of a closed round, as the results show it."""

    state: str  # none (nothing submitted), grading (still running), graded
    verdict: str | None  # passed, failed, error, timeout; or how an ungraded run ended
    score: float | None
    failing: list[dict[str, Any]]  # the tests that did not pass: name, category, message
    run_id: str | None
    # The graded code is what the editor held at the end, sent when the round closed.
    sent_at_end: bool = False


@dataclass(frozen=True)
class RoundView:
    round: CodingRound
    exercise: Exercise
    now: datetime
    outcome: Outcome | None  # only once the round is closed

    @property
    def started(self) -> bool:
        return self.round.started_at is not None

    @property
    def closed(self) -> bool:
        return self.round.closed_at is not None

    @property
    def timed_out(self) -> bool:
        closed, deadline = self.round.closed_at, self.round.deadline
        return closed is not None and deadline is not None and aware(closed) >= aware(deadline)

    @property
    def seconds_left(self) -> float | None:
        if self.round.deadline is None or self.closed:
            return None
        return max(0.0, (aware(self.round.deadline) - self.now).total_seconds())

    @property
    def difficulty(self) -> str | None:
        """Hidden while the round is open: knowing it changes how one attacks a problem."""
        return self.exercise.difficulty if self.closed else None

    @property
    def followup(self) -> dict[str, Any] | None:
        """The follow-up prompt about the code and its key points, once the round is over."""
        index, followups = self.round.followup_index, self.exercise.followup_list
        if not self.closed or index is None or not 0 <= index < len(followups):
            return None
        return followups[index]

    @property
    def followup_covered(self) -> list[int]:
        covered = self.round.followup_covered
        return [int(n) for n in covered.split(",") if n] if covered else []


def build_view(session: Session, found: CodingRound, now: datetime) -> RoundView:
    exercise = session.exec(select(Exercise).where(Exercise.slug == found.exercise_slug)).first()
    if exercise is None:  # the exercise left the content since: the round cannot be shown
        raise NotFound(f"No coding round has the id '{found.id}'.")
    outcome = _outcome(session, found) if found.closed_at is not None else None
    return RoundView(round=found, exercise=exercise, now=now, outcome=outcome)


def _outcome(session: Session, found: CodingRound) -> Outcome:
    run = session.get(Run, found.run_id) if found.run_id else None
    sent_at_end = (
        found.draft_graded_at is not None
        and run is not None
        and as_typed(run.code) == found.draft_code
    )
    unsent = found.draft_graded_at is None and found.draft_code is not None
    if unsent and (run is None or as_typed(run.code) != found.draft_code):
        # Code left unsubmitted at the end, not yet sent to the grader (round_drafts.py).
        return Outcome("grading", None, None, [], None, sent_at_end=True)
    if run is None:
        return Outcome("none", None, None, [], None)
    if run.status != "done":
        return Outcome("grading", None, None, [], run.id, sent_at_end)
    report = json.loads(run.grading) if run.grading else {}
    failing = [
        {k: t.get(k, "") for k in ("name", "category", "message")}
        for t in report.get("tests", [])
        if t.get("status") != "pass"
    ]
    verdict = run.grading_verdict or run.verdict
    return Outcome("graded", verdict, run.score, failing, run.id, sent_at_end)
