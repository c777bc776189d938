"""An exercise's levelled hints (hints.yml, read from the content folder when asked), served
one at a time: concept, then approach, then a near-complete step. After a failing
submission the hint offered first is one that answers a failing test's category. Every hint
shown is recorded once per learner (HintView)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import Connection
from sqlalchemy import select as core_select
from sqlmodel import col, select

from app.db import dialect_of
from app.domain import DomainError, InvalidInput, LearnerScope
from app.exercises import catalogue
from app.models import HintView, Run, utcnow

LEVELS = ("concept", "approach", "step")  # the order hints are served in


class NoHintLeft(DomainError):
    """Every hint (or every hint of the category asked for) has been shown."""

    status = 409


@dataclass(frozen=True)
class Hint:
    index: int  # position in hints.yml: what HintView records
    level: str
    category: str
    text: str

    @property
    def order(self) -> tuple[int, int]:
        return LEVELS.index(self.level), self.index


@dataclass(frozen=True)
class HintState:
    """The hints a learner has seen, in the order they saw them, and what the next request
    would show (without its text: it is not shown until asked for)."""

    total: int
    shown: list[Hint]
    next: Hint | None
    failing: list[str]  # the failing categories of the learner's latest graded submission

    @property
    def next_answers_failure(self) -> bool:
        return self.next is not None and self.next.category in self.failing


def load(content_dir: Path, slug: str) -> list[Hint]:
    """The exercise's hints, in hints.yml's order; `slug` is one of the catalogue's (every
    caller looked it up first). Blocking: one stat() call (each gives up the GIL: the page
    made four before), and reading the file when it changed."""
    path = content_dir / "exercises" / slug / "hints.yml"
    try:
        stat = path.stat()
    except FileNotFoundError:
        return []
    return list(_parsed(path, stat.st_mtime_ns, stat.st_size))


# Every exercise page shows how many hints there are: parsing the YAML each time was a
# tenth of the page's CPU. Kept per file version (its mtime and size), so an edit shows at
# once; at most one version per exercise in use.
@functools.lru_cache(maxsize=256)
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[Hint, ...]:
    raw: Any = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return tuple(
        Hint(i, str(h["level"]), str(h["category"]), str(h["text"]).strip())
        for i, h in enumerate(raw.get("hints") or [])
        if str(h.get("level")) in LEVELS
    )


def shown_indexes(connection: Connection, learner_id: int, slug: str) -> list[int]:
    """The hints this learner has been shown, oldest first."""
    rows = connection.execute(
        core_select(col(HintView.hint_index))
        .where(col(HintView.learner_id) == learner_id, col(HintView.exercise_slug) == slug)
        .order_by(col(HintView.shown_at), col(HintView.id))
    )
    return [index for (index,) in rows]


def failing_categories(connection: Connection, learner_id: int, slug: str) -> list[str]:
    """The categories of the failing tests of the learner's latest graded submission (Run or
    Submit): none when it passed, or when there is none yet."""
    grading = connection.execute(
        core_select(col(Run.grading))
        .where(
            col(Run.learner_id) == learner_id,
            col(Run.exercise_slug) == slug,
            col(Run.grading).is_not(None),
        )
        .order_by(col(Run.created_at).desc())
        .limit(1)
    ).scalar()
    return failing_in(grading)


def failing_in(grading: str | None) -> list[str]:
    """The categories of a grading report's failing tests, in order (none when it passed)."""
    if not grading:
        return []
    report = json.loads(grading)
    if report.get("verdict") == "passed":
        return []
    found: list[str] = []
    for test in report.get("tests", []):
        if test.get("status") != "pass" and test.get("category") not in found:
            found.append(str(test.get("category")))
    return found


def choose(hints: list[Hint], shown: set[int], failing: list[str]) -> Hint | None:
    """The next hint: the lowest-level unshown one answering a failing category when there
    is one, else the lowest-level unshown one."""
    left = sorted((h for h in hints if h.index not in shown), key=lambda h: h.order)
    answering = [h for h in left if h.category in failing]
    found = answering or left
    return found[0] if found else None


def unseen(content_dir: Path, slug: str) -> HintState:
    """The Hints panel of someone who has done nothing yet: no query."""
    hints = load(content_dir, slug)
    return HintState(len(hints), [], choose(hints, set(), []), [])


def state(scope: LearnerScope, content_dir: Path, slug: str) -> HintState:
    """What the Hints panel shows. Blocking."""
    connection = scope.session.connection()
    catalogue.one(connection, slug)
    shown = shown_indexes(connection, scope.learner_id, slug)
    return state_of(
        content_dir, slug, shown, failing_categories(connection, scope.learner_id, slug)
    )


def state_of(content_dir: Path, slug: str, shown: list[int], failing: list[str]) -> HintState:
    """The Hints panel of a learner shown the hints `shown` (indexes, oldest first) whose
    latest grading failed tests of the categories `failing`."""
    hints = load(content_dir, slug)
    by_index = {h.index: h for h in hints}
    seen = [by_index[i] for i in shown if i in by_index]
    upcoming = choose(hints, {h.index for h in seen}, failing)
    return HintState(len(hints), seen, upcoming, failing)


def show_next(
    scope: LearnerScope,
    content_dir: Path,
    slug: str,
    *,
    visitor: str,
    category: str | None = None,
) -> tuple[Hint, HintState]:
    """Show (and record) the next hint, or the next one of `category`. Not committed."""
    before = state(scope, content_dir, slug)
    hints = load(content_dir, slug)
    if category is not None:
        categories = sorted({h.category for h in hints})
        if category not in categories:
            raise InvalidInput(
                f"This exercise has no hint for '{category}': its hints answer "
                f"{', '.join(categories) or 'nothing'}."
            )
        hint = choose(
            [h for h in hints if h.category == category], {h.index for h in before.shown}, []
        )
        if hint is None:
            raise NoHintLeft(f"Every hint for {category} has been shown: they are listed above.")
    elif before.next is None:
        raise NoHintLeft(
            "Every hint of this exercise has been shown. The solution is there when you "
            "give up, or after a failed submission."
        )
    else:
        hint = before.next
    record(scope, slug, hint, visitor=visitor)
    seen = [*before.shown, hint]
    upcoming = choose(hints, {h.index for h in seen}, before.failing)
    return hint, HintState(before.total, seen, upcoming, before.failing)


def record(scope: LearnerScope, slug: str, hint: Hint, *, visitor: str) -> None:
    """The first showing of a hint is recorded; showing it again records nothing."""
    connection = scope.session.connection()
    if hint.index in shown_indexes(connection, scope.learner_id, slug):
        return
    values = {
        "exercise_slug": slug,
        "learner_id": scope.learner_id,
        "visitor": visitor[:64],
        "hint_index": hint.index,
        "level": hint.level,
        "category": hint.category[:32],
        "shown_at": utcnow(),
    }
    insert = dialect_of(connection).insert(HintView).values(**values)
    connection.execute(insert.on_conflict_do_nothing())


def shown_for_export(scope: LearnerScope) -> list[HintView]:
    """Every hint the learner was shown, oldest first."""
    statement = (
        select(HintView)
        .where(HintView.learner_id == scope.learner_id)
        .order_by(col(HintView.shown_at), col(HintView.id))
    )
    return list(scope.session.exec(statement))
