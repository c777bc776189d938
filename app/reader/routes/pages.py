"""Browser pages of the library: the home page and a lab's measurements (the list and the item
page have modules of their own)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from app.deps import (
    EngineDep,
    LearnerDep,
    identify_for_page,
)
from app.library import content_cache
from app.reader import dashboard
from app.reader.visits import item_with_lab
from app.web.templating import render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])

# Handlers that query are plain `def` (FastAPI runs them in its thread pool). The item page
# and the list are in app/reader/routes/item_page.py and app/reader/routes/item_list.py.


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


@router.get("/items/{slug}/measurements")
def lab_measurements(request: Request, slug: str, engine: EngineDep) -> HTMLResponse:
    """A lab's kept measurements alone: what its page swaps in when a run of it ends, so a
    new result shows at once. Not a visit."""
    with engine.connect() as connection:
        page, lab = item_with_lab(connection, slug)
    return render(request, "items/_lab.html", {"item": page.item, "lab": lab})
