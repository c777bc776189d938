"""The JSON API for the library under /api, and the health check."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Annotated

from fastapi import APIRouter, Query, Response
from sqlalchemy import text
from sqlalchemy.engine import Engine

from app.deps import EngineDep, RunQueueDep
from app.domain import Difficulty
from app.library import items, search
from app.library.items import ItemFilter
from app.library.schemas import ItemPublic, ItemSummaryPublic
from app.web.schemas import Health, errors

router = APIRouter(prefix="/api", tags=["api"])


@router.get("/health", responses={503: {"model": Health}})
@router.head("/health", include_in_schema=False)
async def health(engine: EngineDep, queue: RunQueueDep, response: Response) -> Health:
    """Whether the app, its database and the code sandbox are usable; 503 when the database
    is not (so a container health check fails). The sandbox's `state` says `starting` while
    its worker is still loading PyTorch."""
    sandbox = await queue.status()
    loop = asyncio.get_running_loop()
    database = await loop.run_in_executor(_HEALTH_THREAD, _database_state, engine)
    if database != "ok":
        response.status_code = 503
    return Health(
        status="ok" if database == "ok" else "degraded", database=database, sandbox=sandbox
    )


# The health check's query has a thread of its own: behind the pages' work in the shared
# pool, a load balancer's probe would wait as long as the slowest page under load.
_HEALTH_THREAD = ThreadPoolExecutor(1, thread_name_prefix="health")


def _database_state(engine: Engine) -> str:
    """'ok', or what went wrong asking the database for SELECT 1 (blocking)."""
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT 1"))
    except Exception as exc:  # the point is to report it, whatever it is
        return f"error: {type(exc).__name__}"
    return "ok"


@router.get("/items", responses=errors(422))
def list_items(
    engine: EngineDep,
    deck: Annotated[str | None, Query(max_length=64, description="Deck slug.")] = None,
    topic: Annotated[str | None, Query(max_length=64, description="Topic slug.")] = None,
    difficulty: Difficulty | None = None,
    q: Annotated[
        str | None,
        Query(max_length=search.MAX_QUERY_LENGTH, description="Words to search for."),
    ] = None,
) -> list[ItemSummaryPublic]:
    """Items in deck order, or ranked by relevance when `q` is given."""
    filters = ItemFilter(deck=deck or None, topic=topic or None, difficulty=difficulty, q=q)
    with engine.connect() as connection:
        found = search.find(connection, filters)
    return [ItemSummaryPublic.of(hit.item) for hit in found.hits]


@router.get("/items/{slug}", responses=errors(404))
def get_item(slug: str, engine: EngineDep) -> ItemPublic:
    """One item with its Markdown, code samples and quiz prompts."""
    with engine.connect() as connection:
        page = items.item_detail(connection, slug=slug, with_samples=True)
    return ItemPublic.of_detail(page)
