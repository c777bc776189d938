"""Browser pages: home, the item list with search and filters, one item."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import Engine
from sqlmodel import Session

from app.db import SessionDep
from app.errors import InvalidFilter
from app.identity import IdentityDep, identify
from app.routes.progress import study_context
from app.services import items
from app.services.catalogue import load_catalogue
from app.services.items import ItemFilter
from app.services.mine import mine
from app.services.progress import STATUS_LABELS, Status
from app.visitors import COOKIE as VISITOR_COOKIE
from app.web import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify)])
# The list's "progress" filter: a status, or the bookmarked items.
PROGRESS_FILTERS = {
    **{s.value: label for s, label in STATUS_LABELS.items()},
    "bookmarked": "Bookmarked",
}

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
    progress: Annotated[str | None, Query(max_length=16)] = None,
    *,
    identity: IdentityDep,
) -> HTMLResponse:
    """All items, narrowed by deck, topic, difficulty, one's progress and a search; the list
    swaps in place."""
    progress = _blank_is_none(progress)
    if progress and progress not in PROGRESS_FILTERS:
        choices = ", ".join(PROGRESS_FILTERS)
        raise InvalidFilter(f"Progress must be one of {choices}, not '{progress}'.")
    filters = ItemFilter(
        deck=_blank_is_none(deck),
        topic=_blank_is_none(topic),
        difficulty=items.parse_difficulty(_blank_is_none(difficulty)),
        q=_blank_is_none(q),
    )
    hits = items.list_items(session, filters=filters)
    data = mine(session, identity)
    mine_by_item = data.progress_by_item() if data else {}
    statuses: dict[int | None, Status] = {i: Status(p.status) for i, p in mine_by_item.items()}
    if progress == "bookmarked":
        hits = [h for h in hits if h.item.id in mine_by_item and mine_by_item[h.item.id].bookmarked]
    elif progress:
        hits = [h for h in hits if statuses.get(h.item.id, Status.new) is Status(progress)]
    query = {
        k: v
        for k, v in (
            ("deck", filters.deck),
            ("topic", filters.topic),
            ("difficulty", filters.difficulty),
            ("q", filters.q),
            ("progress", progress),
        )
        if v
    }
    context = {
        "catalogue": load_catalogue(session),
        "filters": filters,
        "progress": progress,
        "progress_filters": PROGRESS_FILTERS,
        "statuses": statuses if data else None,
        "bookmarked": {i for i, p in mine_by_item.items() if p.bookmarked},
        "hits": hits,
        "query_string": urlencode(query),
    }
    return render(request, "items/list.html", context, fragment="items/_results.html")


@router.api_route("/items/{slug}", methods=["GET", "HEAD"])
async def item_detail(request: Request, slug: str, identity: IdentityDep) -> HTMLResponse:
    """One question: explanation, tables, code, quiz prompts, neighbours, and what the
    reader has done with it. Opening it counts as a visit for a returning browser."""
    sandbox = await request.app.state.sandbox.status()  # before the queries: see above
    # The hottest page reads plain rows on a connection of its own, closed before rendering:
    # the session dependency and ORM entities were half of its time (bench/http_load.py).
    engine: Engine = request.app.state.engine
    with engine.connect() as connection:
        page = items.item_detail(connection, slug=slug)
    # A browser on its first request has no cookie yet: one that never keeps cookies (a bot,
    # a load test) would otherwise leave a new learner behind at every request.
    returning = identity.user is not None or VISITOR_COOKIE in request.cookies
    if not returning:
        study = study_context(page.item, None, page.prompts)
    else:
        with Session(engine) as session:
            data = mine(session, identity, create=request.method == "GET")
            if data is not None and request.method == "GET":
                data.record_visit(page.item)
                session.commit()
            study = study_context(page.item, data, page.prompts)
    return render(request, "items/detail.html", {"page": page, "sandbox": sandbox, **study})
