"""Progress in the browser: the dashboard, and what a learner does on an item's page
(bookmark it, check their recall of its prompts, keep a note). Guests have all of it too,
kept against their browser until they sign up."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.db import SessionDep
from app.identity import Identity, IdentityDep, identify
from app.models import Item
from app.services import items
from app.services.catalogue import load_catalogue
from app.services.mine import MAX_NOTE_LENGTH, Mine, mine, mine_to_read
from app.services.notes import render_note
from app.services.progress import MASTERY_RULE, Status
from app.web import is_htmx, render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify)])


@router.get("/dashboard")
async def dashboard(request: Request, session: SessionDep, identity: IdentityDep) -> HTMLResponse:
    """Progress per deck and topic, activity, streak, where to go on, recent runs."""
    catalogue = load_catalogue(session)
    board = mine_to_read(session, identity).dashboard(catalogue)
    return render(
        request,
        "progress/dashboard.html",
        {"board": board, "catalogue": catalogue, "mastery_rule": MASTERY_RULE},
    )


def study_context(item: Any, data: Mine | None, prompts: list[Any]) -> dict[str, Any]:
    """What the item page's progress parts need: status, bookmark, checks, note."""
    row = data.progress_of(item) if data else None
    latest: dict[int, bool] = {}
    for check in data.checks_of(item) if data else []:
        latest[check.prompt] = check.knew
    return {
        "item": item,
        "progress": row,
        "status": Status(row.status) if row else Status.new,
        "latest_checks": latest,
        "prompts": prompts,
        "note_html": render_note(row.note) if row and row.note else None,
        "max_note_length": MAX_NOTE_LENGTH,
        "mastery_rule": MASTERY_RULE,
    }


def _answer(
    request: Request, session: SessionDep, item: Item, data: Mine, fragment: str
) -> Response:
    """htmx gets the changed part of the page; a plain form post goes back to the item."""
    session.commit()
    if not is_htmx(request):
        return RedirectResponse(f"/items/{item.slug}#study", status_code=303)
    page = items.item_page(session, slug=item.slug)
    return render(request, fragment, study_context(item, data, page.prompts), fragment=fragment)


def _item_and_mine(session: SessionDep, identity: Identity, slug: str) -> tuple[Item, Mine]:
    """The item (404 when unknown) and the asker's data, which the change will create."""
    item = items.get_item(session, slug=slug)
    data = mine(session, identity, create=True)
    assert data is not None, "create=True always gives a learner"
    return item, data


@router.post("/items/{slug}/bookmark")
async def bookmark(
    request: Request,
    slug: str,
    session: SessionDep,
    identity: IdentityDep,
    on: Annotated[bool, Form()],
) -> Response:
    """Bookmark the item, or take the bookmark off."""
    item, data = _item_and_mine(session, identity, slug)
    data.set_bookmark(item, on=on)
    return _answer(request, session, item, data, "items/_status.html")


@router.post("/items/{slug}/checks")
async def check(
    request: Request,
    slug: str,
    session: SessionDep,
    identity: IdentityDep,
    prompt: Annotated[int, Form(ge=0, le=100)],
    knew: Annotated[bool, Form()],
) -> Response:
    """Record whether the learner could answer one of the item's prompts."""
    item, data = _item_and_mine(session, identity, slug)
    data.record_check(item, prompt=prompt, knew=knew)
    return _answer(request, session, item, data, "items/_study.html")


@router.post("/items/{slug}/note")
async def note(
    request: Request,
    slug: str,
    session: SessionDep,
    identity: IdentityDep,
    text: Annotated[str, Form(max_length=MAX_NOTE_LENGTH * 2)] = "",
) -> Response:
    """Save the learner's private note on the item (Markdown; an empty note removes it)."""
    item, data = _item_and_mine(session, identity, slug)
    data.set_note(item, text=text)
    return _answer(request, session, item, data, "items/_study.html")
