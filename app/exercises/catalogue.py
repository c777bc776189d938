"""Code exercises: the public side kept in the database (the list, one exercise, a
learner's status on each), and the trusted side read from the content folder only when it
is needed: the grading payload of a submission, and the solution a learner asks to see."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import Connection, func
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.domain import LearnerScope, NotFound
from app.exercises import status as exercise_status
from app.library import content_cache
from app.models import CodeSample, Exercise, SolutionReveal
from sandbox.protocol import GradingRequest, Mode

STATUSES = exercise_status.STATUSES  # a learner's standing on one exercise


class ExerciseNotFound(NotFound):
    def __init__(self, slug: str) -> None:
        super().__init__(f"No exercise is called '{slug}'.")


@dataclass(frozen=True)
class ExerciseRow:
    """One exercise as the list shows it, with the learner's status on it."""

    slug: str
    title: str
    topic: str
    difficulty: str
    items: list[str]
    entry_point: str
    status: str


def _exercises(connection: Connection) -> list[Exercise]:
    statement = select(Exercise).order_by(col(Exercise.position))
    return list(Session(bind=connection).exec(statement))


@dataclass(frozen=True)
class _Listed:
    """One exercise as the list needs it, with the words a search looks in."""

    row: ExerciseRow  # with status "new": the learner's status is set per request
    heading: str  # the title, case-folded
    text: str  # title, function name and statement, case-folded


@dataclass(frozen=True)
class _Kept:
    """The exercises as of one content import: they change only with an import, yet the
    list, every exercise page and every item page read them (content_cache keeps this per
    import, so that none of those pages queries them)."""

    by_slug: dict[str, Exercise]  # in the set's order
    listed: list[_Listed]
    by_item: dict[str, list[Exercise]]


def _kept(connection: Connection) -> _Kept:
    snapshot = content_cache.snapshot(connection)
    kept = snapshot.derived.get("exercises")
    if isinstance(kept, _Kept):
        return kept
    found = _exercises(connection)
    by_item: dict[str, list[Exercise]] = {}
    for exercise in found:
        for slug in exercise.item_list:
            by_item.setdefault(slug, []).append(exercise)
    listed = [
        _Listed(
            ExerciseRow(
                slug=e.slug,
                title=e.title,
                topic=e.topic_slug,
                difficulty=e.difficulty,
                items=e.item_list,
                entry_point=e.entry_point,
                status="new",
            ),
            heading=e.title.casefold(),
            text=f"{e.title} {e.entry_point} {e.statement_markdown}".casefold(),
        )
        for e in found
    ]
    fresh = _Kept({e.slug: e for e in found}, listed, by_item)
    snapshot.derived["exercises"] = fresh
    return fresh


MAX_QUERY_LENGTH = 200


def search_terms(query: str | None) -> list[str]:
    """The words of a search, lower-cased; empty when there is nothing to search for."""
    return (query or "").casefold().split()


def statuses(connection: Connection, learner_id: int | None) -> dict[str, str]:
    """slug → status (exercise_status.STATUSES) for the exercises the learner has touched."""
    return exercise_status.statuses(connection, learner_id)


def listing(
    connection: Connection,
    learner_id: int | None,
    *,
    topic: str | None = None,
    difficulty: str | None = None,
    status: str | None = None,
    query: str | None = None,
) -> list[ExerciseRow]:
    """Every exercise in the set's order, narrowed by the filters given. A search keeps the
    exercises whose title, statement or function name holds every word of `query`, those
    with every word in the title first. One query: the learner's statuses (none for a
    guest)."""
    terms = search_terms(query)
    standing = statuses(connection, learner_id) if learner_id is not None else {}
    in_title: list[ExerciseRow] = []
    elsewhere: list[ExerciseRow] = []
    for listed in _kept(connection).listed:
        row = listed.row
        if (topic is not None and row.topic != topic) or (
            difficulty is not None and row.difficulty != difficulty
        ):
            continue
        mine = standing.get(row.slug, "new")
        if status is not None and mine != status:
            continue
        if mine != row.status:
            row = replace(row, status=mine)
        if all(t in listed.heading for t in terms):
            in_title.append(row)
        elif all(t in listed.text for t in terms):
            elsewhere.append(row)
    return in_title + elsewhere


def one(connection: Connection, slug: str) -> Exercise:
    """The exercise `slug`, as of the content's last import (kept: not to be changed).
    ExerciseNotFound for a slug that is none."""
    found = _kept(connection).by_slug.get(slug)
    if found is None:
        raise ExerciseNotFound(slug)
    return found


def visible_tests(exercise: Exercise) -> list[dict[str, str]]:
    tests: list[dict[str, str]] = json.loads(exercise.visible_tests)
    return tests


def for_item(connection: Connection, item_slug: str) -> list[Exercise]:
    """The exercises that drill one Q&A item (every item page asks)."""
    return _kept(connection).by_item.get(item_slug, [])


@dataclass(frozen=True)
class ItemCode:
    """The code a learner can practise on an item, and what they did with its exercises:
    an item's status counts them (progress.item_status)."""

    has_samples: bool
    exercises_tried: int  # submitted to, asked a hint or the solution of
    exercises_solved: int  # a passing Submit, with help or not


def item_code(connection: Connection, learner_id: int, item_id: int) -> ItemCode:
    """Its samples (one count) and the learner's standing on its exercises (one query more,
    only for an item that has exercises)."""
    samples = connection.execute(
        core_select(func.count()).select_from(CodeSample).where(col(CodeSample.item_id) == item_id)
    ).scalar_one()
    snapshot = content_cache.snapshot(connection)
    slug = next((r.slug for r in snapshot.rows if r.id == item_id), None)
    slugs = [e.slug for e in for_item(connection, slug)] if slug else []
    found = exercise_status.statuses(connection, learner_id, slugs) if slugs else {}
    solved = sum(1 for s in found.values() if s in exercise_status.SOLVED)
    return ItemCode(samples > 0, len(found), solved)


def solved_per_topic(connection: Connection, learner_id: int) -> dict[str, tuple[int, int]]:
    """topic slug → (exercises the learner solved, exercises) for the topics that have any."""
    topic_of = {slug: e.topic_slug for slug, e in _kept(connection).by_slug.items()}
    found = exercise_status.statuses(connection, learner_id)
    tally: dict[str, tuple[int, int]] = {}
    for slug, topic in topic_of.items():
        solved, total = tally.get(topic, (0, 0))
        tally[topic] = (solved + (found.get(slug) in exercise_status.SOLVED), total + 1)
    return tally


# The trusted side: read from the folder when needed, never stored or returned by the API
# beyond the hints and the solution a learner asks for (hints, solutions).


def exercise_folder(content_dir: Path, slug: str) -> Path:
    folder = content_dir / "exercises" / slug
    if not (folder / "exercise.yml").is_file():
        raise ExerciseNotFound(slug)
    return folder


def grading_request(content_dir: Path, slug: str, mode: str) -> GradingRequest:
    """The grading payload of a submission: exercise.yml, the reference and the tests,
    which travel to the grader's jail only (sandbox/README.md, "Grading")."""
    folder = exercise_folder(content_dir, slug)
    config: Any = yaml.safe_load((folder / "exercise.yml").read_text(encoding="utf-8"))
    return GradingRequest(
        slug=slug,
        mode=Mode(mode),
        config=config,
        reference=(folder / "reference.py").read_text(encoding="utf-8"),
        tests=(folder / "tests.py").read_text(encoding="utf-8"),
    )


def revealed(scope: LearnerScope) -> list[SolutionReveal]:
    """The learner's reveals, oldest first (for the export)."""
    statement = (
        select(SolutionReveal)
        .where(SolutionReveal.learner_id == scope.learner_id)
        .order_by(col(SolutionReveal.revealed_at))
    )
    return list(scope.session.exec(statement))
