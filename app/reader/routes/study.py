"""What a learner does on an item's page: bookmark it, check their recall of its prompts,
keep a note. Guests have all of it too, kept against their browser until they sign up."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Path, Request
from fastapi.responses import RedirectResponse, Response

from app.deps import CurrentUser, NowDep, WriterDep, identify_for_page
from app.domain import LearnerScope
from app.library import items
from app.library.items import ItemRow
from app.progress import drafts, study
from app.progress.study import MAX_NOTE_LENGTH
from app.study import practice
from app.web.templating import is_htmx, render

router = APIRouter(include_in_schema=False, dependencies=[Depends(identify_for_page)])


def _item(scope: LearnerScope, slug: str) -> ItemRow:
    return items.item_row(scope.session.connection(), slug=slug)


def _answer(request: Request, scope: LearnerScope, item: ItemRow, fragment: str) -> Response:
    """htmx gets the changed part of the page; a plain form post goes back to the item."""
    scope.session.commit()
    if not is_htmx(request):
        return RedirectResponse(f"/items/{item.slug}#study", status_code=303)
    connection = scope.session.connection()
    context = {
        "item": item,
        "prompts": items.prompts_of(connection, item.id),
        "answers": items.answers_of(connection, item.id),
        **study.study_view(scope, item).context(),
    }
    return render(request, fragment, context, fragment=fragment)


@router.post("/items/{slug}/bookmark")
def bookmark(
    request: Request, slug: str, scope: WriterDep, on: Annotated[bool, Form()]
) -> Response:
    """Bookmark the item, or take the bookmark off."""
    item = _item(scope, slug)
    study.set_bookmark(scope, item, on=on)
    return _answer(request, scope, item, "items/_bookmark.html")


@router.post("/items/{slug}/visit")
def first_visit(request: Request, slug: str, scope: WriterDep) -> Response:
    """Record the visit of a browser on its first request. Its page asks for this once the
    browser holds the cookies that page set: the page's own request could not know whether
    they would be kept (a client that never keeps them, or runs no script, leaves nothing)."""
    item = _item(scope, slug)
    study.record_visit(scope, item)
    # Only the pill and the visit note: a bookmark pressed before this answer came must stay.
    return _answer(request, scope, item, "items/_visited.html")


@router.post("/items/{slug}/drafts/{sample}", status_code=204)
def keep_draft(
    slug: str,
    sample: Annotated[int, Path(ge=1, le=100)],
    user: CurrentUser,
    scope: WriterDep,
    code: Annotated[str, Form(max_length=drafts.MAX_DRAFT_CHARACTERS * 2)] = "",
) -> Response:
    """Keep the code an account's editor holds for this sample (its page sends it as the
    learner types). Guests' drafts stay in their browser."""
    item = _item(scope, slug)
    drafts.keep(scope, item, sample=sample, code=code)
    scope.session.commit()
    return Response(status_code=204)


@router.post("/items/{slug}/drafts/{sample}/discard", status_code=204)
def discard_draft(
    slug: str, sample: Annotated[int, Path(ge=1, le=100)], user: CurrentUser, scope: WriterDep
) -> Response:
    """Forget the draft: the editor is back to the sample as printed."""
    item = _item(scope, slug)
    drafts.discard(scope, item, sample=sample)
    scope.session.commit()
    return Response(status_code=204)


@router.post("/items/{slug}/checks")
def check(
    request: Request,
    slug: str,
    scope: WriterDep,
    prompt: Annotated[int, Form(ge=0, le=100)],
    knew: Annotated[bool, Form()],
) -> Response:
    """Record whether the learner could answer one of the item's prompts."""
    item = _item(scope, slug)
    study.record_check(scope, item, prompt=prompt, knew=knew)
    return _answer(request, scope, item, "items/_study.html")


@router.post("/items/{slug}/note")
def note(
    request: Request,
    slug: str,
    scope: WriterDep,
    text: Annotated[str, Form(max_length=MAX_NOTE_LENGTH * 2)] = "",
) -> Response:
    """Save the learner's private note on the item (Markdown; an empty note removes it)."""
    item = _item(scope, slug)
    study.set_note(scope, item, text=text)
    return _answer(request, scope, item, "items/_study.html")


@router.post("/items/{slug}/open")
def open_answer(
    request: Request,
    slug: str,
    scope: WriterDep,
    now: NowDep,
    position: Annotated[int, Form(ge=1, le=100)],
    covered: Annotated[list[int] | None, Form()] = None,
) -> Response:
    """Record an open answer by the key points the learner says it covered."""
    item = _item(scope, slug)
    practice.record_open_answer(scope, item, position=position, covered=covered or [], now=now)
    return _answer(request, scope, item, "items/_study.html")
