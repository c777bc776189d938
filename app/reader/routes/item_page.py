"""The item page: the page every reader opens most, so it is built in one thread hop."""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import HTMLResponse
from sqlalchemy import Connection

from app.deps import app_state, identify_for_page_then
from app.domain import Identity
from app.exercises import status
from app.importer.exercise_coverage import nothing_to_write
from app.reader.visits import OpenedItem, open_item
from app.web.identity import bearer_scheme
from app.web.routing import NamedRoute
from app.web.templating import render

# No router-wide identity dependency: the handler resolves the asker in the same thread hop
# as its reading (identify_for_page_then), where a dependency would take a hop of its own.
# Nor dependencies for the app's parts: it takes them from the app's state. With nothing
# left for FastAPI to solve, validate or serialise, the page is a plain Starlette route:
# FastAPI's handling of an endpoint (its dependency solving, its exit stack) cost about a
# quarter of the page's CPU under load (bench/http_load.py, one core: 1.13 to 0.88 ms a
# signed-in page), for nothing this page uses. Errors go to the app's handlers as
# from any route. app/main.py puts it first among the app's own routes, where no included
# router's machinery is gone through either.


async def item_detail(request: Request) -> HTMLResponse:
    """One question: explanation, tables, code, quiz prompts, neighbours, and what the
    reader has done with it. Opening it counts as a visit for a returning browser."""
    slug: str = request.path_params["slug"]
    state = app_state(request)
    engine, clock = state.engine, state.clock
    sandbox = await state.run_queue.status()  # before any query: no connection held across it
    record = state.visits if request.method == "GET" else None
    credentials = await bearer_scheme(request)

    def reading(connection: Connection, identity: Identity) -> tuple[OpenedItem, int]:
        opened = open_item(engine, connection, identity, slug=slug, record=record, clock=clock)
        return opened, opened.due

    opened = await identify_for_page_then(request, credentials, reading)
    context = {
        "exercises": opened.exercises,
        # Why an item has no exercise (content/items_without_exercises.yml); asked only
        # of an item without one.
        "nothing_to_write": None
        if opened.exercises
        else nothing_to_write(state.settings.content_dir, opened.page.item.slug),
        "exercise_statuses": opened.exercise_statuses,
        "exercise_labels": status.LABELS,
        "page": opened.page,
        "item": opened.page.item,
        "prompts": opened.page.prompts,
        "answers": opened.page.answers,
        "sandbox": sandbox,
        "lab": opened.lab,
    }
    return render(request, "items/detail.html", {**context, **opened.view.context()})


route = NamedRoute("/items/{slug}", item_detail, methods=["GET", "HEAD"], include_in_schema=False)
