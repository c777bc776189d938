"""What a learner does with an item: visits, bookmarks, notes, recall checks and runs, and
the status derived from them. Every function takes the learner's scope first and filters
every statement by its learner id. Writers flush; the caller commits (one request, one
transaction)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Protocol

from markupsafe import Markup
from sqlalchemy import bindparam
from sqlalchemy import select as core_select
from sqlmodel import col, select

from app.db import dialect_of
from app.domain import LearnerScope, NoteTooLong, UnknownPrompt
from app.exercises import catalogue
from app.models import (
    ItemProgress,
    QuizPrompt,
    RecallCheck,
    utcnow,
)
from app.progress import activity_rows, history, progress
from app.progress.notes import render_note
from app.progress.progress import Check, Status

MAX_NOTE_LENGTH = 20_000


class ItemKey(Protocol):
    """What progress needs of an item: an ORM Item or a plain row of the item page."""

    @property
    def id(self) -> int | None: ...

    @property
    def number(self) -> int: ...


def progress_of(scope: LearnerScope, item: ItemKey) -> ItemProgress | None:
    return scope.session.get(ItemProgress, (scope.learner_id, item.id))


def progress_by_item(scope: LearnerScope) -> dict[int, ItemProgress]:
    rows = scope.session.exec(
        select(ItemProgress).where(ItemProgress.learner_id == scope.learner_id)
    )
    return {p.item_id: p for p in rows}


@dataclass(frozen=True)
class ProgressLine:
    """What the item page shows of a learner's progress row: read as a plain row, and with
    the visits not yet written added (visit_writer.py defers a returning reader's visits)."""

    status: str
    bookmarked: bool
    note: str
    visits: int
    last_visit_at: datetime | None

    def with_visits(self, count: int, last: datetime | None) -> ProgressLine:
        if not count:
            return self
        return replace(self, visits=self.visits + count, last_visit_at=last)


# Built once, plain rows: the item page reads these for every signed-in or returning reader.
_PROGRESS_LINE = core_select(
    col(ItemProgress.status),
    col(ItemProgress.bookmarked),
    col(ItemProgress.note),
    col(ItemProgress.visits),
    col(ItemProgress.last_visit_at),
).where(
    col(ItemProgress.learner_id) == bindparam("learner_id"),
    col(ItemProgress.item_id) == bindparam("item_id"),
)
_LATEST_CHECKS = (
    core_select(col(RecallCheck.prompt), col(RecallCheck.knew))
    .where(
        col(RecallCheck.learner_id) == bindparam("learner_id"),
        col(RecallCheck.item_id) == bindparam("item_id"),
    )
    .order_by(col(RecallCheck.answered_at), col(RecallCheck.id))
)


def progress_line(scope: LearnerScope, item: ItemKey) -> ProgressLine | None:
    params = {"learner_id": scope.learner_id, "item_id": item.id}
    row = scope.session.connection().execute(_PROGRESS_LINE, params).first()
    return ProgressLine(*row) if row else None


_CHECKS = (
    select(RecallCheck)
    .where(
        col(RecallCheck.learner_id) == bindparam("learner_id"),
        col(RecallCheck.item_id) == bindparam("item_id"),
    )
    .order_by(col(RecallCheck.answered_at), col(RecallCheck.id))
)


def checks_of(scope: LearnerScope, item: ItemKey) -> list[RecallCheck]:
    params = {"learner_id": scope.learner_id, "item_id": item.id}
    return list(scope.session.exec(_CHECKS, params=params))


@dataclass(frozen=True)
class StudyView:
    """What the item page's progress parts show: status, bookmark, latest checks, note."""

    progress: ProgressLine | None
    status: Status
    latest_checks: dict[int, bool]
    note_html: Markup | None
    runs: list[history.RunLine]  # the learner's latest runs of this item's code, newest first
    drafts: dict[int, str] = field(default_factory=dict)  # an account's edited samples
    learner_id: int | None = None  # whose standing it is (None: someone who has none yet)

    def context(self) -> dict[str, object]:
        return {
            "item_runs": self.runs,
            "drafts": self.drafts,
            "progress": self.progress,
            "status": self.status,
            "latest_checks": self.latest_checks,
            "note_html": self.note_html,
            "max_note_length": MAX_NOTE_LENGTH,
            "mastery_rule": progress.MASTERY_RULE,
        }


def study_view(
    scope: LearnerScope | None, item: ItemKey, *, row: ProgressLine | None = None
) -> StudyView:
    """The learner's standing on `item`; someone with no learner yet stands nowhere. `row`:
    their progress row when the caller has read it already."""
    if scope is None:
        return StudyView(None, Status.new, {}, None, [])
    row = row or progress_line(scope, item)
    params = {"learner_id": scope.learner_id, "item_id": item.id}
    latest = dict(scope.session.connection().execute(_LATEST_CHECKS, params).all())
    return StudyView(
        progress=row,
        status=Status(row.status) if row else Status.new,
        latest_checks=latest,
        note_html=render_note(row.note) if row and row.note else None,
        runs=history.runs_of(scope, item.id),
        learner_id=scope.learner_id,
    )


def record_visit(scope: LearnerScope, item: ItemKey, *, now: datetime | None = None) -> None:
    """The learner opened the item's page: new becomes seen; the day counts as read."""
    now = now or utcnow()
    visit = activity_rows.Visits(scope.learner_id, _id(item), 1, now, now)
    views = [(scope.learner_id, now.date(), 1)]
    activity_rows.record_visits(scope.session.connection(), [visit], views)


def set_bookmark(scope: LearnerScope, item: ItemKey, *, on: bool) -> ItemProgress:
    row = _row(scope, item)
    row.bookmarked = on
    return _save(scope, row)


def set_note(scope: LearnerScope, item: ItemKey, *, text: str) -> ItemProgress:
    text = text.replace("\r\n", "\n").strip()
    if len(text) > MAX_NOTE_LENGTH:
        raise NoteTooLong(len(text), MAX_NOTE_LENGTH)
    row = _row(scope, item)
    row.note = text
    return _save(scope, row)


def record_check(
    scope: LearnerScope,
    item: ItemKey,
    *,
    prompt: int,
    knew: bool,
    now: datetime | None = None,
) -> ItemProgress:
    """The learner's own verdict on one prompt (0 is the item's question itself)."""
    positions = _prompt_positions(scope, item)
    if prompt not in (positions or [0]):
        raise UnknownPrompt(f"Question {item.number} has no prompt number {prompt}.")
    now = now or utcnow()
    scope.session.add(
        RecallCheck(
            learner_id=scope.learner_id,
            item_id=_id(item),
            prompt=prompt,
            knew=knew,
            answered_at=now,
        )
    )
    count_day(scope, now.date(), checks=1)
    return refresh_status(scope, item, prompts=positions)


def record_question_recall(
    scope: LearnerScope, item: ItemKey, *, position: int, knew: bool, now: datetime
) -> ItemProgress:
    """A question of the item answered in a quiz or graded in a mock interview. The item's own
    prompts count towards its mastery as a recall check; the questions the bank adds after
    them are practice on the day (their schedule lives in review) and leave mastery alone."""
    positions = _prompt_positions(scope, item)
    if position in (positions or [0]):
        return record_check(scope, item, prompt=position, knew=knew, now=now)
    count_day(scope, now.date(), checks=1)
    return refresh_status(scope, item, prompts=positions)


def record_run(
    scope: LearnerScope, item: ItemKey | None, *, ok: bool, now: datetime | None = None
) -> None:
    """A run ended; it counts as practice on the day, and on its item when it had one."""
    now = now or utcnow()
    # The item's row before the day's, as the visit writer takes them: in the other order,
    # PostgreSQL found the two transactions deadlocked on each other.
    if item is not None:
        row = _row(scope, item)
        row.runs += 1
        row.runs_ok += int(ok)
        _save(scope, row)
        refresh_status(scope, item)  # flushes the item's row
    count_day(scope, now.date(), runs=1)


def refresh_status(
    scope: LearnerScope, item: ItemKey, *, prompts: list[int] | None = None
) -> ItemProgress:
    """Derive the item's status again from everything recorded for it."""
    row = _row(scope, item)
    scope.session.flush()
    checks = [Check(c.prompt, c.knew, c.answered_at.date()) for c in checks_of(scope, item)]
    code = catalogue.item_code(scope.session.connection(), scope.learner_id, _id(item))
    row.status = progress.item_status(
        visits=row.visits,
        runs=row.runs,
        runs_ok=row.runs_ok,
        checks=checks,
        prompts=_prompt_positions(scope, item) if prompts is None else prompts,
        has_code=code.has_samples,
        exercises_tried=code.exercises_tried,
        exercises_solved=code.exercises_solved,
    ).value
    return _save(scope, row)


def count_day(
    scope: LearnerScope, day: date, *, views: int = 0, runs: int = 0, checks: int = 0
) -> None:
    """Add to the learner's activity on `day` (the calendar and the streak read it)."""
    params = {
        "learner_id": scope.learner_id,
        "day": day,
        "views": views,
        "runs": runs,
        "checks": checks,
    }
    scope.session.connection().execute(activity_rows.day(dialect_of(scope.session)), params)


def _row(scope: LearnerScope, item: ItemKey) -> ItemProgress:
    row = progress_of(scope, item)
    if row is None:
        row = ItemProgress(learner_id=scope.learner_id, item_id=_id(item))
        scope.session.add(row)
    return row


def _save(scope: LearnerScope, row: ItemProgress) -> ItemProgress:
    row.updated_at = utcnow()
    scope.session.add(row)
    scope.session.flush()
    return row


def _id(item: ItemKey) -> int:
    assert item.id is not None, "a stored row has an id"
    return item.id


def _prompt_positions(scope: LearnerScope, item: ItemKey) -> list[int]:
    return list(
        scope.session.exec(
            select(QuizPrompt.position)
            .where(QuizPrompt.item_id == item.id)
            .order_by(col(QuizPrompt.position))
        )
    )
