"""Code exercises: the public side kept in the database (the list, one exercise, a
learner's status on each), and the trusted side read from the content folder only when it
is needed: the grading payload of a submission, and the solution a learner asks to see."""

from __future__ import annotations

import json
from dataclasses import dataclass
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


# What the list needs of each exercise: not its statement's HTML, starter or suite record,
# which the page would otherwise read for every exercise on every request.
_LISTED = (
    col(Exercise.slug),
    col(Exercise.title),
    col(Exercise.topic_slug),
    col(Exercise.difficulty),
    col(Exercise.items),
    col(Exercise.entry_point),
)
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
    with every word in the title first."""
    terms = search_terms(query)
    columns = _LISTED + ((col(Exercise.statement_markdown),) if terms else ())
    found = connection.execute(
        core_select(*columns).order_by(col(Exercise.position))
    ).all()  # fmt: skip
    standing = statuses(connection, learner_id)
    in_title: list[ExerciseRow] = []
    elsewhere: list[ExerciseRow] = []
    for found_row in found:
        slug, title, topic_slug, level, items, entry_point = found_row[:6]
        if (topic is not None and topic_slug != topic) or (
            difficulty is not None and level != difficulty
        ):
            continue
        row = ExerciseRow(
            slug=slug,
            title=title,
            topic=topic_slug,
            difficulty=level,
            items=[s for s in items.split(",") if s],
            entry_point=entry_point,
            status=standing.get(slug, "new"),
        )
        if status is not None and row.status != status:
            continue
        if not terms:
            in_title.append(row)
            continue
        heading = title.casefold()
        text = f"{heading} {entry_point.casefold()} {found_row[6].casefold()}"
        if all(t in heading for t in terms):
            in_title.append(row)
        elif all(t in text for t in terms):
            elsewhere.append(row)
    return in_title + elsewhere


def one(connection: Connection, slug: str) -> Exercise:
    found = Session(bind=connection).exec(select(Exercise).where(Exercise.slug == slug)).first()
    if found is None:
        raise ExerciseNotFound(slug)
    return found


def visible_tests(exercise: Exercise) -> list[dict[str, str]]:
    tests: list[dict[str, str]] = json.loads(exercise.visible_tests)
    return tests


def for_item(connection: Connection, item_slug: str) -> list[Exercise]:
    """The exercises that drill one Q&A item. Every item page asks, so they are worked out
    once per content import (content_cache), not read and filtered on each page. An import
    of exercises alone by another process shows here at its next start or item import."""
    snapshot = content_cache.snapshot(connection)
    kept = snapshot.derived.get("exercises_by_item")
    if isinstance(kept, dict):
        by_item: dict[str, list[Exercise]] = kept
    else:
        by_item = {}
        for exercise in _exercises(connection):
            for slug in exercise.item_list:
                by_item.setdefault(slug, []).append(exercise)
        snapshot.derived["exercises_by_item"] = by_item
    return by_item.get(item_slug, [])


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
    snapshot = content_cache.snapshot(connection)
    kept = snapshot.derived.get("exercise_topics")
    if isinstance(kept, dict):
        topic_of: dict[str, str] = kept
    else:
        topic_of = {e.slug: e.topic_slug for e in _exercises(connection)}
        snapshot.derived["exercise_topics"] = topic_of
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
