"""Browser pages: home, the item list with search and filters, one item."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import Engine

from app.db import SessionDep
from app.services import items
from app.services.catalogue import load_catalogue
from app.services.items import ItemFilter
from app.web import render

router = APIRouter(include_in_schema=False)

# Handlers are `async def` although their queries are synchronous: SQLite answers these
# reads from a local file in well under a millisecond, less than the hop to a worker thread
# that FastAPI makes for plain `def` handlers (see bench/http_load.py for the figures).
# The rule that comes with it: never `await` while the session holds a connection (after
# its first query), or many waiting requests exhaust the pool and block the loop.


@router.api_route("/", methods=["GET", "HEAD"])
async def home(request: Request, session: SessionDep) -> HTMLResponse:
    """What Backprop offers and the decks to start from."""
    return render(request, "home.html", {"catalogue": load_catalogue(session)})


def _blank_is_none(value: str | None) -> str | None:
    """An empty <select> or search box submits '', which means 'no filter'."""
    return value.strip() or None if value is not None else None


@router.api_route("/items", methods=["GET", "HEAD"])
async def item_list(
    request: Request,
    session: SessionDep,
    deck: Annotated[str | None, Query(max_length=64)] = None,
    topic: Annotated[str | None, Query(max_length=64)] = None,
    difficulty: Annotated[str | None, Query(max_length=16)] = None,
    q: Annotated[str | None, Query(max_length=items.MAX_QUERY_LENGTH)] = None,
) -> HTMLResponse:
    """All items, narrowed by deck, topic, difficulty and a search; the list swaps in place."""
    filters = ItemFilter(
        deck=_blank_is_none(deck),
        topic=_blank_is_none(topic),
        difficulty=items.parse_difficulty(_blank_is_none(difficulty)),
        q=_blank_is_none(q),
    )
    hits = items.list_items(session, filters=filters)
    query = {
        k: v
        for k, v in (
            ("deck", filters.deck),
            ("topic", filters.topic),
            ("difficulty", filters.difficulty),
            ("q", filters.q),
        )
        if v
    }
    context = {
        "catalogue": load_catalogue(session),
        "filters": filters,
        "hits": hits,
        "query_string": urlencode(query),
    }
    return render(request, "items/list.html", context, fragment="items/_results.html")


@router.api_route("/items/{slug}", methods=["GET", "HEAD"])
async def item_detail(request: Request, slug: str) -> HTMLResponse:
    """One question: explanation, tables, code, quiz prompts, neighbours."""
    sandbox = await request.app.state.sandbox.status()  # before the queries: see above
    # The hottest page reads plain rows on a connection of its own, closed before rendering:
    # the session dependency and ORM entities were half of its time (bench/http_load.py).
    engine: Engine = request.app.state.engine
    with engine.connect() as connection:
        page = items.item_detail(connection, slug=slug)
    return render(request, "items/detail.html", {"page": page, "sandbox": sandbox})
