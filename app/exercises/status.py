"""A learner's standing on each exercise, derived from what they did: their submissions,
the hints they were shown and the solutions revealed to them, read in one query.

new: nothing yet. attempted: a submission, a hint or a reveal, and no passing Submit.
solved: a passing Submit with no help before it; solved-with-hints: a hint was shown before
the first passing Submit; solved-after-reveal: the solution was revealed before it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BindParameter,
    Connection,
    Select,
    String,
    and_,
    bindparam,
    case,
    cast,
    literal,
    union_all,
)
from sqlalchemy import select as core_select
from sqlmodel import col

from app.models import HintView, Run, SolutionReveal

STATUSES = ("new", "attempted", "solved", "solved-with-hints", "solved-after-reveal")
SOLVED = frozenset({"solved", "solved-with-hints", "solved-after-reveal"})
LABELS = {
    "new": "Not tried",
    "attempted": "Attempted",
    "solved": "Solved",
    "solved-with-hints": "Solved with hints",
    "solved-after-reveal": "Solved after reveal",
}


def event_selects(
    learner: Any, slugs: BindParameter[list[str]] | Sequence[BindParameter[str]] | None = None
) -> list[Select[str, str, datetime]]:
    """The (slug, kind, when) events of one learner's exercises, from runs, hints and
    reveals: three selects to join in a union, narrowed to `slugs` when given (an expanding
    parameter, or one parameter per slug). `learner`: who, as a column expression or a
    bound parameter."""
    passed = and_(col(Run.grading_mode) == "submit", col(Run.grading_verdict) == "passed")
    runs: Select[str, str, datetime] = core_select(
        col(Run.exercise_slug).label("slug"),
        cast(case((passed, "pass"), else_="try"), String(8)).label("kind"),
        col(Run.created_at).label("at"),
    ).where(col(Run.learner_id) == learner, col(Run.exercise_slug).is_not(None))
    hints = core_select(
        col(HintView.exercise_slug), cast(literal("hint"), String(8)), col(HintView.shown_at)
    ).where(col(HintView.learner_id) == learner)
    reveals = core_select(
        col(SolutionReveal.exercise_slug),
        cast(literal("reveal"), String(8)),
        col(SolutionReveal.revealed_at),
    ).where(col(SolutionReveal.learner_id) == learner)
    if slugs is not None:
        runs = runs.where(col(Run.exercise_slug).in_(slugs))
        hints = hints.where(col(HintView.exercise_slug).in_(slugs))
        reveals = reveals.where(col(SolutionReveal.exercise_slug).in_(slugs))
    return [runs, hints, reveals]


# Built once, so a page pays for running them, not building them.
_ALL_EVENTS = union_all(*event_selects(bindparam("learner")))
_EVENTS_OF = union_all(*event_selects(bindparam("learner"), bindparam("slugs", expanding=True)))


def statuses(
    connection: Connection, learner_id: int | None, slugs: Iterable[str] | None = None
) -> dict[str, str]:
    """slug → status, for the exercises the learner has done anything with (the others are
    new), narrowed to `slugs` when given. One query; none for someone with no learner."""
    if learner_id is None:
        return {}
    if slugs is None:
        rows = connection.execute(_ALL_EVENTS, {"learner": learner_id})
    else:
        wanted = sorted(set(slugs))
        if not wanted:
            return {}
        rows = connection.execute(_EVENTS_OF, {"learner": learner_id, "slugs": wanted})
    return from_events(rows)


def from_events(rows: Iterable[Sequence[Any]]) -> dict[str, str]:
    """slug → status from (slug, kind, when) event rows, in any order."""
    events: dict[str, list[tuple[str, datetime]]] = {}
    for slug, kind, at in rows:
        if slug is not None:
            events.setdefault(slug, []).append((kind, at))
    return {slug: standing(found) for slug, found in events.items()}


def standing(events: list[tuple[str, datetime]]) -> str:
    """The status of one exercise from its (kind, when) events: pass, try, hint, reveal."""
    passes = [at for kind, at in events if kind == "pass"]
    if not passes:
        return "attempted" if events else "new"
    first = min(passes)
    if any(kind == "reveal" and at < first for kind, at in events):
        return "solved-after-reveal"
    if any(kind == "hint" and at < first for kind, at in events):
        return "solved-with-hints"
    return "solved"
