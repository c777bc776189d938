"""The item page: the page every reader opens most, so it is built in one thread hop."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from sqlalchemy.engine import Engine

from app.deps import BearerDep, EngineDep, RunQueueDep, VisitsDep, identify_for_page_then
from app.domain import Identity
from app.models import Exercise
from app.services import exercise_status, exercises
from app.services.items import ItemDetail
from app.services.study import StudyView
from app.services.visit_writer import VisitWriter
from app.services.visits import LabView, open_item
from app.web.templating import render

# No router-wide identity dependency: the handler resolves the asker in the same thread hop
# as its reading (identify_for_page_then), where a dependency would take a hop of its own.
router = APIRouter(include_in_schema=False)
ItemReading = tuple[ItemDetail, StudyView, LabView, list[Exercise], dict[str, str] | None]


@router.api_route("/items/{slug}", methods=["GET", "HEAD"])
async def item_detail(
    request: Request,
    slug: str,
    credentials: BearerDep,
    engine: EngineDep,
    queue: RunQueueDep,
    visits: VisitsDep,
) -> HTMLResponse:
    """One question: explanation, tables, code, quiz prompts, neighbours, and what the
    reader has done with it. Opening it counts as a visit for a returning browser."""
    sandbox = await queue.status()  # before any query: no connection is held across it
    record = visits if request.method == "GET" else None

    def reading(identity: Identity) -> ItemReading:
        return _item_page(engine, identity, slug=slug, record=record)

    page, view, lab, drills, drill_status = await identify_for_page_then(
        request, credentials, reading
    )
    context = {
        "exercises": drills,
        "exercise_statuses": drill_status,
        "exercise_labels": exercise_status.LABELS,
        "page": page,
        "item": page.item,
        "prompts": page.prompts,
        "answers": page.answers,
        "sandbox": sandbox,
        "lab": lab,
    }
    return render(request, "items/detail.html", {**context, **view.context()})


def _item_page(
    engine: Engine, identity: Identity, *, slug: str, record: VisitWriter | None
) -> ItemReading:
    """The item page's reading, the exercises that drill it and the reader's status on
    each (one query, for a reader with a learner only). Blocking."""
    page, view, lab = open_item(engine, identity, slug=slug, record=record)
    with engine.connect() as connection:
        drills = exercises.for_item(connection, page.item.slug)
        drill_status = None
        if drills and view.learner_id is not None:
            slugs = [e.slug for e in drills]
            drill_status = exercise_status.statuses(connection, view.learner_id, slugs)
        return page, view, lab, drills, drill_status
