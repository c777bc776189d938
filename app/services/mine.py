"""Personal data: progress, notes, bookmarks, recall checks, activity and runs.

The one place that reads or writes it. `Mine` is bound to one learner and every query it
makes is filtered by that learner's id, so no route can reach another person's rows by
passing an id: there is no function here that takes one from the request."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import case, delete, func, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import defer
from sqlmodel import Session, SQLModel, col, select

from app.errors import DomainError
from app.identity import Identity
from app.models import (
    Activity,
    CodeSample,
    Item,
    ItemProgress,
    Learner,
    QuizPrompt,
    RecallCheck,
    Run,
    User,
    utcnow,
)
from app.services import progress
from app.services.catalogue import Catalogue
from app.services.progress import Check, Status

MAX_NOTE_LENGTH = 20_000


class ItemKey(Protocol):
    """What progress needs of an item: an ORM Item or the item page's plain row."""

    @property
    def id(self) -> int | None: ...

    @property
    def number(self) -> int: ...


RECENT_RUNS = 8


class NoteTooLong(DomainError):
    status = 422

    def __init__(self, length: int) -> None:
        super().__init__(
            f"A note holds at most {MAX_NOTE_LENGTH:,} characters; this one has {length:,}. "
            "Nothing was saved."
        )


class UnknownPrompt(DomainError):
    status = 422


def guest_learner(session: Session, visitor: str) -> Learner | None:
    return session.exec(select(Learner).where(col(Learner.visitor) == visitor)).first()


def user_learner(session: Session, user_id: int | None) -> Learner | None:
    return session.exec(select(Learner).where(col(Learner.user_id) == user_id)).first()


def learner_for(session: Session, identity: Identity, *, create: bool) -> Learner | None:
    """The learner whose data this identity may touch: the user's, or the guest browser's.
    Created on first need when `create`; otherwise None until there is something to show."""
    if identity.user is not None:
        learner = user_learner(session, identity.user.id)
    else:
        learner = guest_learner(session, identity.visitor)
    if learner is None and create:
        if identity.user is not None:
            learner = Learner(user_id=identity.user.id)
        else:
            learner = Learner(visitor=identity.visitor)
        session.add(learner)
        session.flush()
    return learner


def mine(session: Session, identity: Identity, *, create: bool = False) -> Mine | None:
    learner = learner_for(session, identity, create=create)
    return Mine(session, learner.id) if learner and learner.id is not None else None


def carry_guest_into_account(session: Session, *, visitor: str, user: User) -> None:
    """At sign-up or sign-in, this browser's guest data becomes the account's (merged with
    what the account already has). Not committed: part of the sign-in transaction."""
    guest = guest_learner(session, visitor)
    if guest is None:
        return
    own = user_learner(session, user.id)
    if own is None:
        guest.user_id, guest.visitor = user.id, None
        session.add(guest)
        session.flush()
    else:
        merge_learners(session, source=guest, target=own)


# Ids start at 1: a Mine bound to 0 finds no rows (never None, which would match the runs
# that have no learner).
_NOBODY = 0


def mine_to_read(session: Session, identity: Identity) -> Mine:
    """The asker's data for reading. Someone who has done nothing yet has no learner: they
    read as empty, in the same shapes, and nothing is created for them."""
    return mine(session, identity) or Mine(session, _NOBODY)


def _upsert(
    session: Session,
    model: type[SQLModel],
    keys: list[str],
    values: dict[str, Any],
    on_conflict: dict[str, Any],
) -> None:
    """Insert a row or, when its key exists, update it: one statement, safe under races."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    statement = dialect.insert(model).values(**values)
    session.execute(statement.on_conflict_do_update(index_elements=keys, set_=on_conflict))


@dataclass(frozen=True)
class Bar:
    """Progress over a group of items (a deck or a topic), for a bar."""

    slug: str
    title: str
    total: int
    seen: int
    practising: int
    mastered: int

    def percent(self, count: int) -> float:
        return 100.0 * count / self.total if self.total else 0.0

    def public(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "title": self.title,
            "items": self.total,
            "seen": self.seen,
            "practising": self.practising,
            "mastered": self.mastered,
        }


@dataclass(frozen=True)
class Dashboard:
    """Everything the dashboard and GET /api/me/progress show."""

    totals: Counter[str]
    items: int
    decks: list[Bar]
    topics: list[Bar]
    streak_days: int
    practice_days: int
    calendar: list[progress.CalendarCell]
    continue_item: Item | None
    continue_reason: str
    bookmarks: list[Item]
    noted: list[Item]
    recent_runs: list[tuple[Run, Item | None]]

    @property
    def is_empty(self) -> bool:
        return not any(self.totals[s] for s in (Status.seen, Status.practising, Status.mastered))

    def public(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "status_counts": {s.value: self.totals[s.value] for s in Status},
            "decks": [b.public() for b in self.decks],
            "topics": [b.public() for b in self.topics],
            "streak_days": self.streak_days,
            "practice_days": self.practice_days,
            "activity": [
                {"date": c.day.isoformat(), "views": c.views, "practice": c.practice}
                for c in self.calendar
                if c.views or c.practice
            ],
            "continue": _item_ref(self.continue_item),
            "bookmarks": [_item_ref(i) for i in self.bookmarks],
            "recent_runs": [
                {
                    "id": run.id,
                    "item": _item_ref(item),
                    "verdict": run.verdict,
                    "status": run.status,
                    "backend": run.backend,
                    "wall_ms": run.wall_ms,
                    "created_at": run.created_at.isoformat(),
                }
                for run, item in self.recent_runs
            ],
        }


def _item_ref(item: Item | None) -> dict[str, Any] | None:
    if item is None:
        return None
    return {"deck": item.deck_slug, "number": item.number, "slug": item.slug, "title": item.title}


# Lists of items need none of their big text columns.
_LIST_COLUMNS = [defer(getattr(Item, c)) for c in ("body_html", "body_markdown", "body_text")]


class Mine:
    """One learner's data. Every statement below filters on `self.learner_id`."""

    def __init__(self, session: Session, learner_id: int) -> None:
        self.session = session
        self.learner_id = learner_id

    # Reading

    def progress_of(self, item: ItemKey) -> ItemProgress | None:
        return self.session.get(ItemProgress, (self.learner_id, item.id))

    def progress_by_item(self) -> dict[int, ItemProgress]:
        rows = self.session.exec(
            select(ItemProgress).where(ItemProgress.learner_id == self.learner_id)
        )
        return {p.item_id: p for p in rows}

    def checks_of(self, item: ItemKey) -> list[RecallCheck]:
        return list(
            self.session.exec(
                select(RecallCheck)
                .where(RecallCheck.learner_id == self.learner_id, RecallCheck.item_id == item.id)
                .order_by(col(RecallCheck.answered_at), col(RecallCheck.id))
            )
        )

    def runs(self, limit: int | None = None) -> list[tuple[Run, Item | None]]:
        statement = (
            select(Run, Item)
            .join(Item, col(Item.id) == col(Run.item_id), isouter=True)
            .where(Run.learner_id == self.learner_id)
            .order_by(col(Run.created_at).desc())
            .options(*_LIST_COLUMNS)
        )
        if limit:
            statement = statement.limit(limit)
        return [(run, item) for run, item in self.session.exec(statement)]

    def activity(self, since: date) -> dict[date, tuple[int, int]]:
        rows = self.session.exec(
            select(Activity).where(Activity.learner_id == self.learner_id, Activity.day >= since)
        )
        return {a.day: (a.views, a.runs + a.checks) for a in rows}

    # Writing (the caller commits: one request, one transaction)

    def record_visit(self, item: ItemKey, *, now: datetime | None = None) -> None:
        """The learner opened the item's page: new becomes seen; the day counts as read."""
        now = now or utcnow()
        _upsert(
            self.session,
            ItemProgress,
            ["learner_id", "item_id"],
            {
                "learner_id": self.learner_id,
                "item_id": item.id,
                "status": Status.seen.value,
                "bookmarked": False,
                "note": "",
                "visits": 1,
                "runs": 0,
                "runs_ok": 0,
                "first_visit_at": now,
                "last_visit_at": now,
                "updated_at": now,
            },
            {
                "visits": ItemProgress.visits + 1,
                "last_visit_at": now,
                "first_visit_at": func.coalesce(col(ItemProgress.first_visit_at), now),
                "status": case(
                    (col(ItemProgress.status) == Status.new.value, Status.seen.value),
                    else_=col(ItemProgress.status),
                ),
            },
        )
        self._count_day(now.date(), views=1)

    def set_bookmark(self, item: ItemKey, *, on: bool) -> ItemProgress:
        row = self._row(item)
        row.bookmarked = on
        return self._save(row)

    def set_note(self, item: ItemKey, *, text: str) -> ItemProgress:
        text = text.replace("\r\n", "\n").strip()
        if len(text) > MAX_NOTE_LENGTH:
            raise NoteTooLong(len(text))
        row = self._row(item)
        row.note = text
        return self._save(row)

    def record_check(
        self, item: ItemKey, *, prompt: int, knew: bool, now: datetime | None = None
    ) -> ItemProgress:
        """The learner's own verdict on one prompt (0 is the item's question itself)."""
        positions = _prompt_positions(self.session, item)
        if prompt not in (positions or [0]):
            raise UnknownPrompt(f"Question {item.number} has no prompt number {prompt}.")
        now = now or utcnow()
        self.session.add(
            RecallCheck(
                learner_id=self.learner_id,
                item_id=_id(item),
                prompt=prompt,
                knew=knew,
                answered_at=now,
            )
        )
        self._count_day(now.date(), checks=1)
        return self.refresh_status(item, prompts=positions)

    def record_run(self, item: ItemKey | None, *, ok: bool, now: datetime | None = None) -> None:
        """A run ended; it counts as practice on the day, and on its item when it had one."""
        now = now or utcnow()
        self._count_day(now.date(), runs=1)
        if item is not None:
            row = self._row(item)
            row.runs += 1
            row.runs_ok += int(ok)
            self._save(row)
            self.refresh_status(item)

    def refresh_status(self, item: ItemKey, *, prompts: list[int] | None = None) -> ItemProgress:
        """Derive the item's status again from everything recorded for it."""
        row = self._row(item)
        self.session.flush()
        checks = [Check(c.prompt, c.knew, c.answered_at.date()) for c in self.checks_of(item)]
        has_code = (
            self.session.exec(
                select(func.count()).select_from(CodeSample).where(CodeSample.item_id == item.id)
            ).one()
            > 0
        )
        row.status = progress.item_status(
            visits=row.visits,
            runs=row.runs,
            runs_ok=row.runs_ok,
            checks=checks,
            prompts=_prompt_positions(self.session, item) if prompts is None else prompts,
            has_code=has_code,
        ).value
        return self._save(row)

    def _row(self, item: ItemKey) -> ItemProgress:
        row = self.progress_of(item)
        if row is None:
            row = ItemProgress(learner_id=self.learner_id, item_id=_id(item))
            self.session.add(row)
        return row

    def _save(self, row: ItemProgress) -> ItemProgress:
        row.updated_at = utcnow()
        self.session.add(row)
        self.session.flush()
        return row

    def _count_day(self, day: date, *, views: int = 0, runs: int = 0, checks: int = 0) -> None:
        _upsert(
            self.session,
            Activity,
            ["learner_id", "day"],
            {
                "learner_id": self.learner_id,
                "day": day,
                "views": views,
                "runs": runs,
                "checks": checks,
            },
            {
                "views": Activity.views + views,
                "runs": Activity.runs + runs,
                "checks": Activity.checks + checks,
            },
        )

    # The dashboard

    def dashboard(self, catalogue: Catalogue, *, today: date | None = None) -> Dashboard:
        today = today or utcnow().date()
        items = list(
            self.session.exec(
                select(Item).options(*_LIST_COLUMNS).order_by(col(Item.deck_slug), col(Item.number))
            )
        )
        mine = self.progress_by_item()
        status_of = {i.id: Status(mine[i.id].status) if i.id in mine else Status.new for i in items}
        decks = [
            _bar(d.slug, d.title, [i for i in items if i.deck_slug == d.slug], status_of)
            for d in catalogue.decks
        ]
        topics = [
            _bar(t.slug, t.title, [i for i in items if i.topic_slug == t.slug], status_of)
            for t in catalogue.topics
        ]
        start = today - timedelta(days=7 * progress.CALENDAR_WEEKS + 7)
        activity = self.activity(since=start)
        # The streak may be older than the calendar: read practice days back as far as it goes.
        practice_days = set(
            self.session.exec(
                select(col(Activity.day)).where(
                    Activity.learner_id == self.learner_id,
                    (col(Activity.runs) + col(Activity.checks)) > 0,
                )
            )
        )
        by_id = {i.id: i for i in items}
        visited = sorted(
            (p for p in mine.values() if p.last_visit_at and p.item_id in by_id),
            key=lambda p: p.last_visit_at or datetime.min,
            reverse=True,
        )
        cont, reason = _next_step(items, visited, status_of, by_id)
        # Bookmarked items may never have been opened (bookmarked from the API): those last.
        recent_first = [*visited, *(p for p in mine.values() if not p.last_visit_at)]
        return Dashboard(
            totals=Counter(s.value for s in status_of.values()),
            items=len(items),
            decks=decks,
            topics=[t for t in topics if t.total],
            streak_days=progress.streak(practice_days, today=today),
            practice_days=len(practice_days),
            calendar=progress.calendar(activity, today=today),
            continue_item=cont,
            continue_reason=reason,
            bookmarks=[by_id[p.item_id] for p in recent_first if p.bookmarked],
            noted=[by_id[p.item_id] for p in recent_first if p.note],
            recent_runs=self.runs(limit=RECENT_RUNS),
        )

    # Export and merge

    def export(self, user: User | None) -> dict[str, Any]:
        """All of this learner's data, as JSON-ready values."""
        slugs = dict(self.session.exec(select(Item.id, Item.slug)).all())
        progress_rows = sorted(self.progress_by_item().values(), key=lambda p: p.item_id)
        checks = self.session.exec(
            select(RecallCheck)
            .where(RecallCheck.learner_id == self.learner_id)
            .order_by(col(RecallCheck.answered_at))
        )
        days = self.session.exec(
            select(Activity)
            .where(Activity.learner_id == self.learner_id)
            .order_by(col(Activity.day))
        )
        return {
            "format": "backprop-export/1",
            "exported_at": utcnow().isoformat(),
            "account": None
            if user is None
            else {
                "username": user.username,
                "created_at": user.created_at.isoformat(),
                "password_changed_at": user.password_changed_at.isoformat(),
            },
            "progress": [
                {
                    "item": slugs.get(p.item_id),
                    "status": p.status,
                    "bookmarked": p.bookmarked,
                    "note": p.note,
                    "visits": p.visits,
                    "runs": p.runs,
                    "runs_ok": p.runs_ok,
                    "first_visit_at": _iso(p.first_visit_at),
                    "last_visit_at": _iso(p.last_visit_at),
                }
                for p in progress_rows
            ],
            "recall_checks": [
                {
                    "item": slugs.get(c.item_id),
                    "prompt": c.prompt,
                    "knew": c.knew,
                    "answered_at": c.answered_at.isoformat(),
                }
                for c in checks
            ],
            "activity": [
                {"date": a.day.isoformat(), "views": a.views, "runs": a.runs, "checks": a.checks}
                for a in days
            ],
            "runs": [
                {
                    "id": run.id,
                    "item": item.slug if item else None,
                    "sample": run.sample_index,
                    "created_at": run.created_at.isoformat(),
                    "backend": run.backend,
                    "device": run.device,
                    "verdict": run.verdict,
                    "exit_code": run.exit_code,
                    "wall_ms": run.wall_ms,
                    "code_sha256": run.code_sha256,
                    "stdout": run.stdout,
                    "stderr": run.stderr,
                }
                for run, item in self.runs()
            ],
        }


def item_progress_public(item: Item, row: ItemProgress | None) -> dict[str, Any]:
    """One's progress on one item, as the API shows it (an item never touched reads new)."""
    return {
        "item": item.slug,
        "status": row.status if row else Status.new.value,
        "bookmarked": bool(row and row.bookmarked),
        "note": row.note if row else "",
        "visits": row.visits if row else 0,
        "runs": row.runs if row else 0,
        "runs_ok": row.runs_ok if row else 0,
    }


def _id(row: ItemKey | User) -> int:
    assert row.id is not None, "a stored row has an id"
    return row.id


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _bar(slug: str, title: str, items: list[Item], status_of: dict[int | None, Status]) -> Bar:
    counts = Counter(status_of[i.id] for i in items)
    return Bar(
        slug,
        title,
        len(items),
        counts[Status.seen],
        counts[Status.practising],
        counts[Status.mastered],
    )


def _next_step(
    items: list[Item],
    visited: list[ItemProgress],
    status_of: dict[int | None, Status],
    by_id: dict[int | None, Item],
) -> tuple[Item | None, str]:
    """Where to go on: the last item opened and not yet mastered, else the first unseen one."""
    for row in visited:
        if status_of[row.item_id] is not Status.mastered:
            return by_id[row.item_id], "You opened it last and have not mastered it yet."
    ordered = sorted(items, key=lambda i: (i.deck_slug != "deep-learning", i.deck_slug, i.number))
    for item in ordered:
        if status_of[item.id] is Status.new:
            return item, "The first question you have not opened yet."
    return None, "You have opened every question."


def _prompt_positions(session: Session, item: ItemKey) -> list[int]:
    return list(
        session.exec(
            select(QuizPrompt.position)
            .where(QuizPrompt.item_id == item.id)
            .order_by(col(QuizPrompt.position))
        )
    )


def merge_learners(session: Session, *, source: Learner, target: Learner) -> None:
    """Carry a guest's data into an account's learner (at sign-in), then drop the guest.
    Both have rows for an item: counts add up, a bookmark on either stays, notes are kept
    both, and the status is derived again. Not committed: the caller's transaction."""
    assert source.id is not None and target.id is not None
    theirs = Mine(session, source.id).progress_by_item()
    ours = Mine(session, target.id)
    existing = ours.progress_by_item()
    touched: list[int] = []
    for item_id, guest in theirs.items():
        row = existing.get(item_id)
        if row is None:
            continue
        row.visits += guest.visits
        row.runs += guest.runs
        row.runs_ok += guest.runs_ok
        row.bookmarked = row.bookmarked or guest.bookmarked
        if guest.note and guest.note != row.note:
            row.note = f"{row.note}\n\n{guest.note}".strip()
        row.first_visit_at = min(
            (t for t in (row.first_visit_at, guest.first_visit_at) if t), default=None
        )
        row.last_visit_at = max(
            (t for t in (row.last_visit_at, guest.last_visit_at) if t), default=None
        )
        session.add(row)
        session.delete(guest)
        touched.append(item_id)
    session.flush()
    session.execute(
        update(ItemProgress)
        .where(col(ItemProgress.learner_id) == source.id)
        .values(learner_id=target.id)
    )
    for model in (RecallCheck, Run):
        session.execute(
            update(model).where(col(model.learner_id) == source.id).values(learner_id=target.id)
        )
    for day in session.exec(select(Activity).where(Activity.learner_id == source.id)):
        ours._count_day(day.day, views=day.views, runs=day.runs, checks=day.checks)
    session.execute(delete(Activity).where(col(Activity.learner_id) == source.id))
    session.delete(source)
    session.flush()
    for item in session.exec(select(Item).where(col(Item.id).in_(touched))):
        ours.refresh_status(item)
