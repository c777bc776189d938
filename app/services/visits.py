"""The rules of reading: what opening an item records, and where a reader stands on the
items of a list. Each function does its database work in one session it opens and closes
itself, and is synchronous: nothing can be awaited while it holds a connection, so a page
cannot starve the pool by waiting with a connection checked out."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlalchemy import Connection
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.domain import Identity
from app.models import utcnow
from app.services import content_cache, drafts, labs, learners, study
from app.services.items import ItemDetail
from app.services.progress import Status
from app.services.study import StudyView
from app.services.visit_writer import VisitWriter


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


def open_item(
    engine: Engine,
    identity: Identity,
    *,
    slug: str,
    record: VisitWriter | None,
) -> tuple[ItemDetail, StudyView, LabView]:
    """The item and the reader's standing on it. With a `record`er (a GET), the visit is
    recorded for a browser that will be recognised again, and the standing read after it;
    one on its first request has no cookie yet, and one that never keeps cookies (a bot, a
    load test) would otherwise leave a new learner behind at every request. Blocking."""
    if not (identity.signed_in or identity.known_browser):
        with engine.connect() as connection:  # nothing to record: plain rows, no session
            page = content_cache.item_detail(connection, slug)
            return page, study.study_view(None, page.item), lab_view(connection, page)
    with Session(engine) as session:
        page = content_cache.item_detail(session.connection(), slug)
        lab = lab_view(session.connection(), page)
        scope = learners.resolve(session, identity)
        row = study.progress_line(scope, page.item) if scope is not None else None
        if record is not None and scope is None:  # a first visit: the learner begins now
            scope = learners.resolve_or_create(session, identity)
            study.record_visit(scope, page.item)
            session.commit()
            row = None  # read again below, with this visit
        elif record is not None and scope is not None and (row is None or row.status == NEW):
            session.commit()  # no connection held while the visit waits its turn
            record.record(learner_id=scope.learner_id, item_id=page.item.id, at=utcnow())
            row = None  # its first visit makes it "seen": read again below
        elif record is not None and scope is not None and row is not None:
            # A return to an item already seen: only counters change, written soon after.
            record.defer(learner_id=scope.learner_id, item_id=page.item.id, at=utcnow())
        if scope is not None and record is not None:
            row = row or study.progress_line(scope, page.item)
            if row is not None:
                row = row.with_visits(
                    *record.deferred(learner_id=scope.learner_id, item_id=page.item.id)
                )
        view = study.study_view(scope, page.item, row=row)
        if scope is not None and identity.signed_in and 'class="sample"' in page.body_html:
            view = replace(view, drafts=drafts.drafts_of(scope, page.item))
        return page, view, lab


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
    if not (identity.signed_in or identity.known_browser):
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
