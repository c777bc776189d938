"""The two exercise pages read most: the list with its filters and search, and one exercise
with its editor. Like the item page (app/reader/routes/item_page.py), each is a plain
Starlette route that resolves the asker and reads its page in one thread hop on one
connection: FastAPI's handling of their query parameters and dependencies, with a hop of
its own for the asker, cost more than the page's own reading (bench/http_load.py)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from markupsafe import Markup
from pydantic import BaseModel, Field
from sqlalchemy import Connection
from sqlmodel import Session

from app.deps import app_state, identify_for_page_then, navigation_due
from app.domain import Identity, InvalidFilter
from app.exercises import catalogue as exercises
from app.exercises import hints, page_standing
from app.exercises import status as exercise_status
from app.exercises.schemas.exercises import SubmissionPublic
from app.library import content_cache
from app.models import EXERCISE_DIFFICULTIES
from app.platform import learners
from app.web.identity import bearer_scheme
from app.web.routing import NamedRoute, query_values
from app.web.templating import kept_fragment, render

STATUS_LABELS = exercise_status.LABELS


class ListQuery(BaseModel):
    """The list's query string; a value past its length is refused (422)."""

    topic: str | None = Field(None, max_length=64)
    difficulty: str | None = Field(None, max_length=64)
    status: str | None = Field(None, max_length=64)
    q: str | None = Field(None, max_length=exercises.MAX_QUERY_LENGTH)


class PageQuery(BaseModel):
    """An exercise page's query string: `review=1` solves it again from the starter."""

    review: bool = False


def _choice(value: str | None, allowed: tuple[str, ...] | set[str], what: str) -> str | None:
    """An empty <select> sends '': no filter. Anything else must be one of `allowed`."""
    value = (value or "").strip() or None
    if value is not None and value not in allowed:
        raise InvalidFilter(f"{what} must be one of {', '.join(sorted(allowed))}, not '{value}'.")
    return value


async def exercise_list(request: Request) -> HTMLResponse:
    """Every exercise, narrowed by topic, difficulty and the learner's status on it, and by
    a search of titles and statements. A filter refused (422) is refused once the asker is
    known, so that its page still shows them signed in."""
    clock = app_state(request).clock
    credentials = await bearer_scheme(request)

    def reading(connection: Connection, identity: Identity) -> tuple[dict[str, Any], int]:
        given = query_values(request, ListQuery)
        catalogue = content_cache.snapshot(connection).catalogue
        chosen = {
            "topic": _choice(given.topic, {t.slug for t in catalogue.topics}, "Topic"),
            "difficulty": _choice(given.difficulty, EXERCISE_DIFFICULTIES, "Difficulty"),
            "status": _choice(given.status, tuple(STATUS_LABELS), "Status"),
        }
        learner_id = None
        if identity.may_have_records:
            with Session(bind=connection) as session:
                scope = learners.resolve(session, identity)
                learner_id = scope.learner_id if scope is not None else None
        query = " ".join(exercises.search_terms(given.q))
        rows = exercises.listing(connection, learner_id, **chosen, query=query)

        def row_main(row: exercises.ExerciseRow) -> Markup:
            return kept_fragment(
                "exercises/_row_main.html",
                title=row.title,
                topic=catalogue.topic_title(row.topic),
                difficulty=row.difficulty,
                status=row.status,
                label=STATUS_LABELS[row.status],
            )

        context = {
            "catalogue": catalogue,
            "rows": rows,
            "row_main": row_main,
            "chosen": chosen,
            "query": (given.q or "").strip(),
            "difficulties": EXERCISE_DIFFICULTIES,
            "status_labels": STATUS_LABELS,
        }
        return context, navigation_due(connection, identity, clock)

    context = await identify_for_page_then(request, credentials, reading)
    return render(request, "exercises/list.html", context, fragment="exercises/_results.html")


async def exercise_page(request: Request) -> HTMLResponse:
    """The statement, the starter in the editor (or an account's draft, except in review,
    which starts from the starter), Run and Submit, the results, the hints shown so far, the
    solution once revealed (not in review), and when it is due for re-solving once solved."""
    slug: str = request.path_params["slug"]
    state = app_state(request)
    clock, content_dir = state.clock, state.settings.content_dir
    sandbox = await state.run_queue.status()  # before any query: no connection held across it
    credentials = await bearer_scheme(request)

    def reading(connection: Connection, identity: Identity) -> tuple[dict[str, Any], int]:
        in_review = query_values(request, PageQuery).review
        return _page_context(connection, identity, slug, content_dir, in_review, clock())

    context = await identify_for_page_then(request, credentials, reading)
    return render(request, "exercises/detail.html", {**context, "sandbox": sandbox})


def _page_context(
    connection: Connection,
    identity: Identity,
    slug: str,
    content_dir: Path,
    in_review: bool,
    now: datetime,
) -> tuple[dict[str, Any], int]:
    """The page's context and the navigation's due count, read on the hop's connection.
    Blocking."""
    exercise = exercises.one(connection, slug)
    snapshot = content_cache.snapshot(connection)
    context: dict[str, Any] = {
        "exercise": exercise,
        "visible_tests": exercises.visible_tests(exercise),
        "items": [r for r in snapshot.rows if r.slug in exercise.item_list],
        "catalogue": snapshot.catalogue,
        "account_drafts": identity.signed_in,
        "draft": None,
        "review_mode": in_review,
        "next_review": None,
        "hints": None,
        "solution": None,
        "solution_state": "review" if in_review else "open",
        "seen_before": False,
        "last_result": None,
    }
    mine = (
        page_standing.for_page(
            connection, identity, slug=slug, content_dir=content_dir, in_review=in_review, now=now
        )
        if identity.may_have_records
        else None  # a first request has done nothing yet: no query for its standing
    )
    if mine is None:  # no learner yet: nothing recorded, nothing due
        context["hints"] = hints.unseen(content_dir, slug)
        return context, 0
    latest = mine.latest_submission
    context.update(
        draft=mine.draft,
        hints=mine.hints,
        solution=mine.solution.solution,
        solution_state=mine.solution.state,
        seen_before=mine.solution.seen_before,
        next_review=mine.next_review,
        # The latest grading's results, shown again after a reload (a review starts afresh).
        last_result=SubmissionPublic.of(latest).model_dump(mode="json") if latest else None,
    )
    return context, mine.due


list_route = NamedRoute(
    "/exercises", exercise_list, methods=["GET", "HEAD"], include_in_schema=False
)
page_route = NamedRoute(
    "/exercises/{slug}", exercise_page, methods=["GET", "HEAD"], include_in_schema=False
)
