"""The rules of reading: what opening an item records, and where a reader stands on the
items of a list. Each function does its database work on the connection it is given or in
connections it opens and closes itself, and is synchronous: nothing can be awaited while it
holds a connection, so a page cannot starve the pool by waiting with a connection checked
out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.domain import Identity
from app.exercises import catalogue
from app.labs import labs
from app.library import content_cache
from app.library.items import ItemDetail, ItemRow
from app.models import Exercise, utcnow
from app.platform import learners
from app.progress import study
from app.progress.notes import render_note
from app.progress.progress import Status
from app.progress.study import StudyView
from app.progress.visit_writer import VisitWriter
from app.reader import item_standing


@dataclass(frozen=True)
class LabView:
    """A lab's kept measurements by device, and the labs that time this item's claims."""

    measured: dict[str, list[labs.Measured]] = field(default_factory=dict)
    measured_by: list[labs.LabLink] = field(default_factory=list)

    @property
    def gpu_measured(self) -> bool:
        """Whether any kept measurement ran on an NVIDIA GPU (CUDA reports that name)."""
        return any("nvidia" in device.lower() for device in self.measured)


def lab_view(connection: Connection, page: ItemDetail) -> LabView:
    snapshot = content_cache.snapshot(connection)
    measuring = snapshot.labs_measuring(page.item.slug)
    return LabView(
        measured=labs.measured(connection, page.item.id) if page.item.measures else {},
        measured_by=[
            labs.LabLink(lab.slug, lab.title, labs.latest(connection, lab.id)) for lab in measuring
        ],
    )


NEW = Status.new.value


@dataclass(frozen=True)
class OpenedItem:
    """An item page's reading: the item, the reader's standing on it and on the exercises
    that drill it, the labs that time it, and the reader's due count (the navigation's)."""

    page: ItemDetail
    view: StudyView
    lab: LabView
    exercises: list[Exercise]
    exercise_statuses: dict[str, str] | None  # None: no exercises, or no learner yet
    due: int


def item_with_lab(connection: Connection, slug: str) -> tuple[ItemDetail, LabView]:
    page = content_cache.item_detail(connection, slug)
    return page, lab_view(connection, page)


def open_item(
    engine: Engine,
    connection: Connection,
    identity: Identity,
    *,
    slug: str,
    record: VisitWriter | None,
    clock: Callable[[], datetime],
) -> OpenedItem:
    """The item and the reader's standing on it (item_standing: one statement), read on
    `connection` (the page's: its owner was read on it). With a `record`er (a GET), the
    visit is recorded for a browser that will be recognised again, and the standing read
    after it; one on its first request has no cookie yet, and one that never keeps cookies
    (a bot, a load test) would otherwise leave a new learner behind at every request.
    `clock`: now, read only for a reader who may have something due (on PostgreSQL it asks
    the database). Blocking."""
    known = identity.may_have_records
    now = clock() if known else utcnow()
    page, lab = item_with_lab(connection, slug)
    drills = catalogue.for_item(connection, page.item.slug)
    if not known:  # nothing to record and nothing recorded: no statement of the reader's
        return OpenedItem(page, study.study_view(None, page.item), lab, drills, None, 0)
    slugs = [e.slug for e in drills]
    mine = item_standing.read(
        connection, identity, item_id=page.item.id, exercise_slugs=slugs, now=now
    )
    if record is not None:
        if _changes_the_page(mine):
            # Written on a connection of its own, with this one's read transaction ended (no
            # snapshot kept open across a write); read again, the standing shows it.
            connection.rollback()
            _record(engine, identity, record, mine, page.item)
            mine = item_standing.read(
                connection, identity, item_id=page.item.id, exercise_slugs=slugs, now=now
            )
        else:  # a return to an item already seen: counted now, written soon after
            assert mine.learner_id is not None
            record.defer(learner_id=mine.learner_id, item_id=page.item.id, at=utcnow())
        if mine.learner_id is not None and mine.progress is not None:
            waiting = record.deferred(learner_id=mine.learner_id, item_id=page.item.id)
            mine.progress = mine.progress.with_visits(*waiting)
    if not (identity.signed_in and 'class="sample"' in page.body_html):
        mine.drafts = {}
    statuses = mine.exercise_statuses if drills and mine.learner_id is not None else None
    return OpenedItem(page, _view(mine), lab, drills, statuses, mine.due)


def _changes_the_page(mine: item_standing.ItemStanding) -> bool:
    """Whether recording this visit changes what the page shows: a first visit to the item,
    or of the reader ("new" becomes "seen"). A return to an item already seen changes only
    counters, written soon after (visit_writer.py) and added to the page meanwhile."""
    return mine.learner_id is None or mine.progress is None or mine.progress.status == NEW


def _record(
    engine: Engine,
    identity: Identity,
    record: VisitWriter,
    mine: item_standing.ItemStanding,
    item: ItemRow,
) -> None:
    """Record a visit that changes the page, before the page is read again."""
    if mine.learner_id is None:  # a first visit: the learner begins now
        with Session(engine) as session:
            scope = learners.resolve_or_create(session, identity)
            study.record_visit(scope, item)
            session.commit()
        return
    record.record(learner_id=mine.learner_id, item_id=item.id, at=utcnow())


def _view(mine: item_standing.ItemStanding) -> StudyView:
    if mine.learner_id is None:
        return StudyView(None, Status.new, {}, None, [])
    row = mine.progress
    return StudyView(
        progress=row,
        status=Status(row.status) if row else Status.new,
        latest_checks=mine.latest_checks,
        note_html=render_note(row.note) if row and row.note else None,
        runs=mine.runs,
        drafts=mine.drafts,
        learner_id=mine.learner_id,
    )


@dataclass(frozen=True)
class Standing:
    """A reader's status on every item they touched, and their bookmarks."""

    known: bool  # False: they have recorded nothing yet
    statuses: dict[int, Status] = field(default_factory=dict)
    bookmarked: frozenset[int] = frozenset()

    def status_of(self, item_id: int) -> Status:
        return self.statuses.get(item_id, Status.new)


def standing(connection: Connection, identity: Identity) -> Standing:
    """Where the reader stands, for the list's status pills and its progress filter."""
    if not identity.may_have_records:
        return Standing(known=False)  # a browser on its first request has recorded nothing
    with Session(bind=connection) as session:
        scope = learners.resolve(session, identity)
        if scope is None:
            return Standing(known=False)
        rows = study.progress_by_item(scope)
    return Standing(
        known=True,
        statuses={i: Status(p.status) for i, p in rows.items()},
        bookmarked=frozenset(i for i, p in rows.items() if p.bookmarked),
    )
