"""The JSON API under /api, documented at /docs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from sqlalchemy import text

from app.db import SessionDep
from app.schemas import ErrorBody, Health, ItemPublic, ItemSummaryPublic, SandboxHealth
from app.services import items
from app.services.items import Difficulty, ItemFilter

router = APIRouter(prefix="/api", tags=["api"])
# `async def` with synchronous SQLite reads, for the reason given in app/routes/pages.py.


@router.get("/health", responses={503: {"model": Health}})
@router.head("/health", include_in_schema=False)
async def health(session: SessionDep, request: Request, response: Response) -> Health:
    """Whether the app, its database and the code sandbox are usable; 503 when the database
    is not (so a container health check fails)."""
    status = await request.app.state.sandbox.status()  # before the query: see pages.py
    try:
        session.execute(text("SELECT 1"))
        database = "ok"
    except Exception as exc:  # the point is to report it, whatever it is
        database = f"error: {type(exc).__name__}"
    if database != "ok":
        response.status_code = 503
    return Health(
        status="ok" if database == "ok" else "degraded",
        database=database,
        sandbox=SandboxHealth(
            available=status.available,
            backends=list(status.backends),
            device=status.device,
            devices=status.devices,
            detail=status.detail,
        ),
    )


@router.get("/items", responses={422: {"model": ErrorBody}})
async def list_items(
    session: SessionDep,
    deck: Annotated[str | None, Query(max_length=64, description="Deck slug.")] = None,
    topic: Annotated[str | None, Query(max_length=64, description="Topic slug.")] = None,
    difficulty: Difficulty | None = None,
    q: Annotated[
        str | None,
        Query(max_length=items.MAX_QUERY_LENGTH, description="Words to search for."),
    ] = None,
) -> list[ItemSummaryPublic]:
    """Items in deck order, or ranked by relevance when `q` is given."""
    filters = ItemFilter(deck=deck or None, topic=topic or None, difficulty=difficulty, q=q)
    return [ItemSummaryPublic.of(hit.item) for hit in items.list_items(session, filters=filters)]


@router.get("/items/{slug}", responses={404: {"model": ErrorBody}})
async def get_item(slug: str, session: SessionDep) -> ItemPublic:
    """One item with its Markdown, code samples and quiz prompts."""
    return ItemPublic.of_page(items.item_page(session, slug=slug, with_samples=True))
