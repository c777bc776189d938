"""Browser pages of the library: home, the item list with search and filters, one item."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from app.deps import (
    EngineDep,
    IdentityDep,
    LearnerDep,
    identify_for_page,
)
from app.domain import InvalidFilter
from app.services import content_cache, dashboard, items, search
from app.services.items import ItemFilter
from app.services.progress import STATUS_LABELS, Status
from app.services.visits import item_with_lab, standing
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])
# The list's "progress" filter: a status, or the bookmarked items.
PROGRESS_FILTERS = {
    **{s.value: label for s, label in STATUS_LABELS.items()},
    "bookmarked": "Bookmarked",
}

# Handlers that query are plain `def` (FastAPI runs them in its thread pool). The item page
# itself is in app/routes/item_page.py.


# What the home page confirms after a redirect to it (/?done=signed-out).
DONE_MESSAGES = {
    "signed-out": "You are signed out. Your progress stays with your account.",
    "deleted": "Your account and everything recorded with it have been deleted.",
}


@router.api_route("/", methods=["GET", "HEAD"])
def home(
    request: Request,
    engine: EngineDep,
    learner: LearnerDep,
    done: Annotated[str | None, Query(max_length=32)] = None,
) -> HTMLResponse:
    """What Backprop offers and the decks to start from; for a returning learner, first
    where to go on, what is due for review and their streak."""
    with engine.connect() as connection:
        catalogue = content_cache.snapshot(connection).catalogue
    welcome = dashboard.welcome(learner) if learner is not None else None
    context = {"catalogue": catalogue, "welcome": welcome, "done": DONE_MESSAGES.get(done or "")}
    return render(request, "home.html", context)


def _blank_is_none(value: str | None) -> str | None:
    """An empty <select> or search box submits '', which means 'no filter'."""
    return value.strip() or None if value is not None else None


@router.api_route("/items", methods=["GET", "HEAD"])
def item_list(
    request: Request,
    engine: EngineDep,
    identity: IdentityDep,
    deck: Annotated[str | None, Query(max_length=64)] = None,
    topic: Annotated[str | None, Query(max_length=64)] = None,
    difficulty: Annotated[str | None, Query(max_length=16)] = None,
    q: Annotated[str | None, Query(max_length=search.MAX_QUERY_LENGTH)] = None,
    progress: Annotated[str | None, Query(max_length=16)] = None,
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
    with engine.connect() as connection:
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
        context = {
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
    return render(request, "items/list.html", context, fragment="items/_results.html")


@router.get("/items/{slug}/measurements")
def lab_measurements(request: Request, slug: str, engine: EngineDep) -> HTMLResponse:
    """A lab's kept measurements alone: what its page swaps in when a run of it ends, so a
    new result shows at once. Not a visit."""
    with engine.connect() as connection:
        page, lab = item_with_lab(connection, slug)
    return render(request, "items/_lab.html", {"item": page.item, "lab": lab})
