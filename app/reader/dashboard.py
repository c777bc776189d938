"""The learner's overview: progress per deck and topic, activity, streak, where to go on,
bookmarks, notes and recent runs. Read-only; everything filtered by the learner's scope."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from markupsafe import Markup
from sqlalchemy.orm import defer
from sqlmodel import col, select

from app.domain import LearnerScope
from app.exercises import catalogue as exercises
from app.library.catalogue import Catalogue
from app.models import Activity, Exercise, Item, ItemProgress, Run, utcnow
from app.progress import progress, study
from app.progress.notes import render_note
from app.progress.progress import Status

RECENT_RUNS = 8
# Lists of items need none of their big text columns.
LIST_COLUMNS = [defer(getattr(Item, c)) for c in ("body_html", "body_markdown", "body_text")]


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


@dataclass(frozen=True)
class ExerciseTally:
    """A topic's code exercises, and how many of them the learner solved."""

    slug: str
    title: str
    solved: int
    total: int

    @property
    def percent(self) -> float:
        return 100.0 * self.solved / self.total if self.total else 0.0


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
    exercises: list[ExerciseTally] = field(default_factory=list)  # per topic that has any
    # slug → title of the exercises the recent runs were submitted to
    run_exercises: dict[str, str] = field(default_factory=dict)

    @property
    def is_empty(self) -> bool:
        return not any(self.totals[s] for s in (Status.seen, Status.practising, Status.mastered))


@dataclass(frozen=True)
class NoteView:
    """One of the learner's notes, in full, on the notes page."""

    item: Item
    note_html: Markup
    updated_at: datetime


def runs(scope: LearnerScope, limit: int | None = None) -> list[tuple[Run, Item | None]]:
    """The learner's runs, newest first, with the item each came from."""
    statement = (
        select(Run, Item)
        .join(Item, col(Item.id) == col(Run.item_id), isouter=True)
        .where(Run.learner_id == scope.learner_id)
        .order_by(col(Run.created_at).desc())
        .options(*LIST_COLUMNS)
    )
    if limit:
        statement = statement.limit(limit)
    return [(run, item) for run, item in scope.session.exec(statement)]


def _exercise_titles(scope: LearnerScope, runs: list[tuple[Run, Item | None]]) -> dict[str, str]:
    """slug → title of the exercises among these runs (one query, none without any)."""
    slugs = {run.exercise_slug for run, _ in runs if run.exercise_slug}
    if not slugs:
        return {}
    found = scope.session.exec(
        select(Exercise.slug, Exercise.title).where(col(Exercise.slug).in_(slugs))
    )
    return dict(found.all())


@dataclass(frozen=True)
class Welcome:
    """What a returning learner's home page shows first."""

    continue_item: Item | None
    continue_reason: str
    streak_days: int
    practice_days: int


def welcome(scope: LearnerScope, *, today: date | None = None) -> Welcome:
    """Where to go on and the streak, without the rest of the dashboard (its calendar, bars
    and runs): the home page shows only these."""
    items = _items(scope)
    mine = study.progress_by_item(scope)
    status_of = _statuses(items, mine)
    practice_days = _practice_days(scope)
    cont, reason = _continue(items, mine, status_of)
    return Welcome(
        continue_item=cont,
        continue_reason=reason,
        streak_days=progress.streak(practice_days, today=today or utcnow().date()),
        practice_days=len(practice_days),
    )


def _items(scope: LearnerScope) -> list[Item]:
    statement = select(Item).options(*LIST_COLUMNS).order_by(col(Item.deck_slug), col(Item.number))
    return list(scope.session.exec(statement))


def _statuses(items: list[Item], mine: dict[int, ItemProgress]) -> dict[int | None, Status]:
    return {i.id: Status(mine[i.id].status) if i.id in mine else Status.new for i in items}


def _practice_days(scope: LearnerScope) -> set[date]:
    """Every day with practice: the streak may be older than the calendar."""
    return set(
        scope.session.exec(
            select(col(Activity.day)).where(
                Activity.learner_id == scope.learner_id,
                (col(Activity.runs) + col(Activity.checks)) > 0,
            )
        )
    )


def _visited(items: list[Item], mine: dict[int, ItemProgress]) -> list[ItemProgress]:
    """The learner's items in the order last opened, most recent first."""
    ids = {i.id for i in items}
    return sorted(
        (p for p in mine.values() if p.last_visit_at and p.item_id in ids),
        key=lambda p: p.last_visit_at or datetime.min,
        reverse=True,
    )


def _continue(
    items: list[Item], mine: dict[int, ItemProgress], status_of: dict[int | None, Status]
) -> tuple[Item | None, str]:
    by_id = {i.id: i for i in items}
    return _next_step(items, _visited(items, mine), status_of, by_id)


def dashboard(scope: LearnerScope, catalogue: Catalogue, *, today: date | None = None) -> Dashboard:
    today = today or utcnow().date()
    session = scope.session
    items = _items(scope)
    mine = study.progress_by_item(scope)
    status_of = _statuses(items, mine)
    decks = [
        _bar(d.slug, d.title, [i for i in items if i.deck_slug == d.slug], status_of)
        for d in catalogue.decks
    ]
    topics = [
        _bar(t.slug, t.title, [i for i in items if i.topic_slug == t.slug], status_of)
        for t in catalogue.topics
    ]
    start = today - timedelta(days=7 * progress.CALENDAR_WEEKS + 7)
    activity = {
        a.day: (a.views, a.runs + a.checks)
        for a in session.exec(
            select(Activity).where(Activity.learner_id == scope.learner_id, Activity.day >= start)
        )
    }
    practice_days = _practice_days(scope)
    by_id = {i.id: i for i in items}
    visited = _visited(items, mine)
    cont, reason = _next_step(items, visited, status_of, by_id)
    # Bookmarked items may never have been opened (bookmarked from the API): those last.
    recent_first = [*visited, *(p for p in mine.values() if not p.last_visit_at)]
    solved = exercises.solved_per_topic(session.connection(), scope.learner_id)
    recent_runs = runs(scope, limit=RECENT_RUNS)
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
        recent_runs=recent_runs,
        exercises=[
            ExerciseTally(t.slug, t.title, *solved[t.slug])
            for t in catalogue.topics
            if t.slug in solved
        ],
        run_exercises=_exercise_titles(scope, recent_runs),
    )


def notes(scope: LearnerScope) -> list[NoteView]:
    """Every note the learner keeps, in full, the most recently changed first."""
    rows = scope.session.exec(
        select(ItemProgress, Item)
        .join(Item, col(Item.id) == col(ItemProgress.item_id))
        .where(ItemProgress.learner_id == scope.learner_id, col(ItemProgress.note) != "")
        .order_by(col(ItemProgress.updated_at).desc())
        .options(*LIST_COLUMNS)
    )
    return [NoteView(item, render_note(p.note), p.updated_at) for p, item in rows]


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
