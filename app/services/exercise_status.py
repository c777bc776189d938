"""A learner's standing on each exercise, derived from what they did: their submissions,
the hints they were shown and the solutions revealed to them, read in one query.

new: nothing yet. attempted: a submission, a hint or a reveal, and no passing Submit.
solved: a passing Submit with no help before it; solved-with-hints: a hint was shown before
the first passing Submit; solved-after-reveal: the solution was revealed before it."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import Connection, String, and_, case, cast, literal, union_all
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


def statuses(
    connection: Connection, learner_id: int | None, slugs: Iterable[str] | None = None
) -> dict[str, str]:
    """slug → status, for the exercises the learner has done anything with (the others are
    new), narrowed to `slugs` when given. One query; none for someone with no learner."""
    if learner_id is None:
        return {}
    wanted = None if slugs is None else sorted(set(slugs))
    if wanted == []:
        return {}
    passed = and_(col(Run.grading_mode) == "submit", col(Run.grading_verdict) == "passed")
    parts = [
        core_select(
            col(Run.exercise_slug).label("slug"),
            cast(case((passed, "pass"), else_="try"), String(8)).label("kind"),
            col(Run.created_at).label("at"),
        ).where(col(Run.learner_id) == learner_id, col(Run.exercise_slug).is_not(None)),
        core_select(
            col(HintView.exercise_slug),
            cast(literal("hint"), String(8)),
            col(HintView.shown_at),
        ).where(col(HintView.learner_id) == learner_id),
        core_select(
            col(SolutionReveal.exercise_slug),
            cast(literal("reveal"), String(8)),
            col(SolutionReveal.revealed_at),
        ).where(col(SolutionReveal.learner_id) == learner_id),
    ]
    if wanted is not None:
        parts[0] = parts[0].where(col(Run.exercise_slug).in_(wanted))
        parts[1] = parts[1].where(col(HintView.exercise_slug).in_(wanted))
        parts[2] = parts[2].where(col(SolutionReveal.exercise_slug).in_(wanted))
    events: dict[str, list[tuple[str, datetime]]] = {}
    for slug, kind, at in connection.execute(union_all(*parts)):
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
