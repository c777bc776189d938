"""The library's list: every item, narrowed by filters and a search, the page readers
search from. Built in one thread hop, as the item page is (app/reader/routes/item_page.py)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, Field
from sqlalchemy import Connection

from app.deps import app_state, identify_for_page_then, navigation_due
from app.domain import Identity, InvalidFilter
from app.library import content_cache, items, search
from app.library.items import ItemFilter
from app.progress.progress import STATUS_LABELS, Status
from app.reader.visits import standing
from app.web.identity import bearer_scheme
from app.web.routing import NamedRoute, query_values
from app.web.templating import render

# The list's "progress" filter: a status, or the bookmarked items.
PROGRESS_FILTERS = {
    **{s.value: label for s, label in STATUS_LABELS.items()},
    "bookmarked": "Bookmarked",
}


class ListFilters(BaseModel):
    """The list's filters as the query string gives them (the last of repeated values), each
    refused past its length as FastAPI refuses a query parameter: with pydantic's own error,
    which the app's handler words for a page."""

    deck: str | None = Field(None, max_length=64)
    topic: str | None = Field(None, max_length=64)
    difficulty: str | None = Field(None, max_length=16)
    q: str | None = Field(None, max_length=search.MAX_QUERY_LENGTH)
    progress: str | None = Field(None, max_length=16)


# Like the item page, a plain Starlette route: FastAPI's handling of its five query
# parameters and two dependencies cost about a quarter of a search's CPU under load
# (bench/http_load.py, one core).


def filter_values(request: Request) -> dict[str, str | None]:
    """The list's filters from the query string: None when missing or blank (an empty
    <select> or search box submits ''), else stripped. RequestValidationError (422) for a
    value too long."""
    given = query_values(request, ListFilters)
    return {name: (value.strip() or None) if value else None for name, value in given}


async def item_list(request: Request) -> HTMLResponse:
    """All items, narrowed by deck, topic, difficulty, one's progress and a search; the list
    swaps in place. A filter refused (422) is refused once the asker is known, so that its
    page still shows them signed in."""
    clock = app_state(request).clock
    credentials = await bearer_scheme(request)

    def reading(connection: Connection, identity: Identity) -> tuple[dict[str, Any], int]:
        given = filter_values(request)
        progress = given["progress"]
        if progress and progress not in PROGRESS_FILTERS:
            choices = ", ".join(PROGRESS_FILTERS)
            raise InvalidFilter(f"Progress must be one of {choices}, not '{progress}'.")
        filters = ItemFilter(
            deck=given["deck"],
            topic=given["topic"],
            difficulty=items.parse_difficulty(given["difficulty"]),
            q=given["q"],
        )
        due = navigation_due(connection, identity, clock)
        return _listing(connection, identity, filters, progress), due

    context = await identify_for_page_then(request, credentials, reading)
    return render(request, "items/list.html", context, fragment="items/_results.html")


def _listing(
    connection: Connection, identity: Identity, filters: ItemFilter, progress: str | None
) -> dict[str, Any]:
    """The page's context: the hits, narrowed by the reader's progress, and the catalogue
    the filters offer. Blocking."""
    found = search.find(connection, filters)
    hits = found.hits
    reader = standing(connection, identity)
    if progress == "bookmarked":
        hits = [h for h in hits if h.item.id in reader.bookmarked]
    elif progress:
        hits = [h for h in hits if reader.status_of(h.item.id) is Status(progress)]
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
    snapshot = content_cache.snapshot(connection)
    return {
        "catalogue": snapshot.catalogue,
        "counts": snapshot.counts,
        "listing": snapshot.catalogue.listing(filters.deck),
        "filters": filters,
        "progress": progress,
        "progress_filters": PROGRESS_FILTERS,
        "statuses": reader.statuses if reader.known else None,
        "bookmarked": reader.bookmarked,
        "hits": hits,
        "corrected": found.corrected,
        "query_string": urlencode(query),
    }


route = NamedRoute("/items", item_list, methods=["GET", "HEAD"], include_in_schema=False)
