"""Everything an item page shows of its reader, read in one statement: their learner, the
navigation's due count, their progress row, recall checks, latest runs, drafts and the
statuses of the item's exercises.

The item page is the page opened most, and a signed-in reader's took eight statements, each
a round of the driver (and a release of the GIL, which a loaded one-core server pays for in
waiting). Here the parts are one UNION ALL of rows of one shape: a part number and columns
each part fills as it needs (the others NULL), built once per kind of owner and run as
driver SQL (app/prepared.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    BindParameter,
    Boolean,
    Connection,
    Integer,
    String,
    bindparam,
    union_all,
)
from sqlalchemy import select as core_select
from sqlmodel import col

from app.domain import Identity
from app.exercises import status
from app.models import Draft, ItemProgress, Learner, RecallCheck
from app.platform.due_count import due_count_of
from app.prepared import Prepared, part_row
from app.progress import history
from app.progress.study import ProgressLine

LEARNER, DUE, PROGRESS, CHECK, RUN, DRAFT, EVENT = range(7)
# Each part's columns by position after the part number: two integers, a flag, four texts
# and a time. The first part's casts give every column its type (and its result handling:
# SQLite keeps times as text and flags as integers); the time's is the tables' own, which
# gives times back in UTC.
_TIME = ItemProgress.__table__.c.last_visit_at.type  # type: ignore[attr-defined]
_SHAPE = (
    ("i1", Integer),
    ("i2", Integer),
    ("b1", Boolean),
    ("s1", String),
    ("s2", String),
    ("s3", String),
    ("s4", String),
    ("t1", _TIME),
)


def _row(part: int, **given: Any) -> list[Any]:
    return part_row(part, _SHAPE, **given)


@cache
def _statement(*, by_user: bool, exercises: int) -> Prepared:
    """The reader's rows for the item `item`, for the learner of the user (or the visitor)
    `owner`, with the `exercises` slugs `slug_0`, `slug_1`... and the due count at `now`.
    Built once per shape: an expanding IN would render the whole statement's text again
    at every execution, which cost more than running it."""
    owner = (col(Learner.user_id) if by_user else col(Learner.visitor)) == bindparam("owner")
    me = core_select(col(Learner.id).label("id")).where(owner).cte("me")
    item: BindParameter[int] = bindparam("item")
    runs = history.latest_runs(me.c.id).subquery()
    parts = [
        core_select(*_row(LEARNER, i1=me.c.id)),
        core_select(*_row(DUE, i1=due_count_of(owner))),
        core_select(
            *_row(
                PROGRESS,
                s1=col(ItemProgress.status),
                b1=col(ItemProgress.bookmarked),
                s2=col(ItemProgress.note),
                i1=col(ItemProgress.visits),
                t1=col(ItemProgress.last_visit_at),
            )
        ).where(col(ItemProgress.learner_id) == me.c.id, col(ItemProgress.item_id) == item),
        core_select(
            *_row(
                CHECK,
                i1=col(RecallCheck.prompt),
                b1=col(RecallCheck.knew),
                t1=col(RecallCheck.answered_at),
                i2=col(RecallCheck.id),
            )
        ).where(col(RecallCheck.learner_id) == me.c.id, col(RecallCheck.item_id) == item),
        core_select(
            *_row(
                RUN,
                s1=runs.c.verdict,
                s2=runs.c.status,
                i1=runs.c.sample_index,
                i2=runs.c.wall_ms,
                s3=runs.c.backend,
                t1=runs.c.created_at,
                s4=runs.c.code,
            )
        ),
    ]
    slugs: list[BindParameter[str]] = [bindparam(f"slug_{n}") for n in range(exercises)]
    for events in status.event_selects(me.c.id, slugs) if slugs else []:
        slug, kind, at = events.subquery().c
        parts.append(core_select(*_row(EVENT, s1=slug, s2=kind, t1=at)))
    if by_user:  # a guest's drafts stay in their browser
        parts.append(
            core_select(*_row(DRAFT, i1=col(Draft.sample_index), s1=col(Draft.code))).where(
                col(Draft.learner_id) == me.c.id, col(Draft.item_id) == item
            )
        )
    # The learner's row leads: the other parts name `me` only in their conditions.
    parts[0] = parts[0].select_from(me)
    return Prepared(union_all(*parts))


@dataclass
class ItemStanding:
    """What the item page shows of its reader; no learner: they have recorded nothing."""

    learner_id: int | None = None
    due: int = 0
    progress: ProgressLine | None = None
    latest_checks: dict[int, bool] = field(default_factory=dict)
    runs: list[history.RunLine] = field(default_factory=list)
    drafts: dict[int, str] = field(default_factory=dict)
    exercise_statuses: dict[str, str] = field(default_factory=dict)


def read(
    connection: Connection,
    identity: Identity,
    *,
    item_id: int | None,
    exercise_slugs: list[str],
    now: datetime,
) -> ItemStanding:
    """The reader's standing on one item, in one statement (a signed-in reader or a browser
    that has recorded something; a reader with no learner yet gets an empty standing)."""
    by_user = identity.user_id is not None
    statement = _statement(by_user=by_user, exercises=len(exercise_slugs))
    params = {
        "owner": identity.user_id if by_user else identity.visitor,
        "item": item_id,
        "now": now,
        **{f"slug_{n}": slug for n, slug in enumerate(exercise_slugs)},
    }
    found = ItemStanding()
    checks: list[tuple[datetime, int, int, bool]] = []
    events: list[tuple[str, str, datetime]] = []
    for part, i1, i2, b1, s1, s2, s3, s4, t1 in statement.rows(connection, params):
        if part == LEARNER:
            found.learner_id = i1
        elif part == DUE:
            found.due = int(i1 or 0)
        elif part == PROGRESS:
            found.progress = ProgressLine(s1, bool(b1), s2, i1, t1)
        elif part == CHECK:
            checks.append((t1, i2, i1, bool(b1)))
        elif part == RUN:
            found.runs.append(history.RunLine(s1, s2, i1, i2, s3, t1, s4))
        elif part == DRAFT:
            found.drafts[i1] = s1
        elif part == EVENT:
            events.append((s1, s2, t1))
    # The latest verdict on each prompt wins; runs newest first (a union keeps no order).
    found.latest_checks = {prompt: knew for _, _, prompt, knew in sorted(checks)}
    found.runs.sort(key=lambda run: run.created_at, reverse=True)
    found.exercise_statuses = status.from_events(events)
    return found
