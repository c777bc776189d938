"""The timing labs in the JSON API: what each lab times and what it measured, and starting
a run of a lab's own code (whose result is kept, as when it runs from the lab's page)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends
from sqlalchemy import Connection
from sqlalchemy.engine import Engine

from app.deps import (
    ClientDep,
    EngineDep,
    IdempotencyKey,
    IdentityDep,
    RunLimiterDep,
    RunQueueDep,
    SettingsDep,
    identify,
)
from app.domain import Identity, NotFound
from app.labs import labs
from app.labs.schemas import LabPublic, LabRunCreate, MeasurementPublic
from app.library import content_cache, items
from app.library.catalogue import LAB_DECK
from app.library.items import ItemRow
from app.runs import runs
from app.runs.run_origin import origin_for
from app.runs.runs import RunOrigin
from app.runs.schemas import RunAccepted
from app.web.schemas import errors

# Reading labs needs nobody; starting a run is someone's (identify: cookies or a token).
router = APIRouter(prefix="/api/labs", tags=["labs"], responses=errors(413))


def _lab(connection: Connection, slug: str) -> ItemRow:
    row = next((r for r in content_cache.snapshot(connection).rows if r.slug == slug), None)
    if row is None or row.deck_slug != LAB_DECK:
        raise NotFound(f"No lab is called '{slug}'.")
    return row


@router.get("")
def list_labs(engine: EngineDep) -> list[LabPublic]:
    """Every lab, with its latest measurements on each device."""
    with engine.connect() as connection:
        rows = [r for r in content_cache.snapshot(connection).rows if r.deck_slug == LAB_DECK]
        return [
            LabPublic(
                slug=r.slug,
                title=r.title,
                measures=r.measure_list,
                measurements=[MeasurementPublic.of(m) for m in labs.latest(connection, r.id)],
            )
            for r in rows
        ]


@router.get("/{slug}", responses=errors(404))
def get_lab(slug: str, engine: EngineDep) -> LabPublic:
    """One lab, with every measurement kept (the most recent per device)."""
    with engine.connect() as connection:
        row = _lab(connection, slug)
        kept = labs.measured(connection, row.id)
    return LabPublic(
        slug=row.slug,
        title=row.title,
        measures=row.measure_list,
        measurements=[MeasurementPublic.of(m) for device in kept.values() for m in device],
    )


@router.post(
    "/{slug}/runs",
    status_code=202,
    dependencies=[Depends(identify)],
    responses=errors(400, 401, 403, 404, 422, 429, 503),
)
async def run_lab(
    slug: str,
    identity: IdentityDep,
    client: ClientDep,
    engine: EngineDep,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
    settings: SettingsDep,
    body: LabRunCreate | None = None,
    idempotency_key: IdempotencyKey = None,
) -> RunAccepted:
    """Run the lab's own code: follow it at /api/runs/{id}/events. When it ends, the timing
    receipt is in its output and kept with the lab (GET /api/labs/{slug}).

    An `Idempotency-Key` header works as on POST /api/runs: the same key from the same owner
    answers with the run it started first; the same key for another lab or backend is
    refused with 422."""
    code, origin = await asyncio.to_thread(_lab_code_and_origin, engine, identity, slug, client)
    backend = body.backend if body else "auto"
    submitted = await runs.submit(
        engine,
        queue,
        limiter,
        code=code,
        backend=backend,
        origin=origin,
        token_secret=settings.resolved_secret_key(),
        idempotency_key=idempotency_key,
    )
    return RunAccepted.of(submitted)


def _lab_code_and_origin(
    engine: Engine, identity: Identity, slug: str, client: str
) -> tuple[str, RunOrigin]:
    """The lab's code and the run's origin (blocking: called in a thread)."""
    with engine.connect() as connection:
        row = _lab(connection, slug)
        page = items.item_detail(connection, slug=row.slug, with_samples=True)
    origin = origin_for(engine, identity, client=client, item_slug=row.slug, sample=1)
    return page.samples[0].code, origin
