"""Running code: start a run, read it, follow it live (server-sent events), cancel it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from app.db import SessionDep
from app.identity import Identity, IdentityDep, identify
from app.models import Run
from app.schemas import ErrorBody
from app.services import items
from app.services.mine import learner_for
from app.services.runs import RunHub, run_public

# Runs belong to a learner: the signed-in user's (cookie or bearer token) or the guest's.
router = APIRouter(prefix="/api/runs", tags=["runs"], dependencies=[Depends(identify)])
HEARTBEAT_SECONDS = 15


class RunCreate(BaseModel):
    """Code to run. `item` and `sample` say which sample it came from, when it did."""

    code: str = Field(description="Python source, at most 64 KiB of UTF-8.")
    backend: Literal["cpu", "cuda", "auto"] = "auto"
    item: str | None = Field(None, max_length=120, description="Slug of the item.")
    sample: int | None = Field(None, ge=1, le=100, description="Sample number in the item.")


class RunAccepted(BaseModel):
    id: str
    status: str


class RunPublic(BaseModel):
    """A run as stored; `verdict` is null until it has ended."""

    id: str
    status: str
    verdict: str | None
    exit_code: int | None
    stdout: str
    stderr: str
    detail: str
    truncated: bool
    wall_ms: int | None
    cpu_ms: int | None
    max_memory_mb: int | None
    backend: str | None
    device: str | None


def hub_of(request: Request) -> RunHub:
    hub: RunHub = request.app.state.runs
    return hub


@router.post(
    "",
    status_code=202,
    responses={400: {"model": ErrorBody}, 429: {"model": ErrorBody}, 503: {"model": ErrorBody}},
)
async def start_run(
    body: RunCreate, request: Request, session: SessionDep, identity: IdentityDep
) -> RunAccepted:
    """Queue code to run; follow it at /api/runs/{id}/events."""
    item_id = None
    if body.item:
        item_id = items.get_item(session, slug=body.item).id
    learner = learner_for(session, identity, create=True)
    assert learner is not None
    learner_id = learner.id  # read before the commit expires it
    session.commit()
    session.close()  # give the connection back before waiting on the sandbox
    run = await hub_of(request).start(
        code=body.code,
        backend=body.backend,
        visitor=identity.owner_key,
        learner_id=learner_id,
        item_id=item_id,
        sample_index=body.sample,
    )
    return RunAccepted(id=run.id, status=run.status)


@router.get("/{run_id}", responses={404: {"model": ErrorBody}})
async def get_run(
    run_id: str, request: Request, session: SessionDep, identity: IdentityDep
) -> RunPublic:
    """The run as it stands: its output so far is in the events stream."""
    return RunPublic(**run_public(owned(request, session, identity, run_id)))


def owned(request: Request, session: SessionDep, identity: Identity, run_id: str) -> Run:
    """The run if it is the asker's; anyone else gets the same 404 as for no run at all."""
    learner = learner_for(session, identity, create=False)
    session.close()  # the stream that may follow must not hold a connection
    return hub_of(request).owned(run_id, learner_id=learner.id if learner else None)


@router.post("/{run_id}/cancel", status_code=202, responses={404: {"model": ErrorBody}})
async def cancel_run(
    run_id: str, request: Request, session: SessionDep, identity: IdentityDep
) -> RunAccepted:
    """Stop a queued or running run; it ends with verdict `killed`."""
    hub = hub_of(request)
    owned(request, session, identity, run_id)
    run = hub.cancel(run_id)
    return RunAccepted(id=run.id, status=run.status)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, 404: {"model": ErrorBody}},
)
async def run_events(
    run_id: str, request: Request, session: SessionDep, identity: IdentityDep
) -> StreamingResponse:
    """Server-sent events: queued, started, stdout, stderr, then result (the run)."""
    hub = hub_of(request)
    owned(request, session, identity, run_id)  # 404 before the stream starts

    async def stream() -> AsyncIterator[str]:
        events = hub.events(run_id).__aiter__()
        next_event: asyncio.Task[dict[str, Any]] | None = None
        while True:
            next_event = next_event or asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({next_event}, timeout=HEARTBEAT_SECONDS)
            if not done:
                yield ": still running\n\n"  # keeps proxies from closing a quiet stream
                continue
            try:
                event = next_event.result()
            except StopAsyncIteration:
                return
            next_event = None
            event = dict(event)  # shared with other watchers: never change it
            kind = event.pop("type")
            payload = event["result"] if kind == "result" else event
            yield f"event: {kind}\ndata: {json.dumps(payload)}\n\n"
            if kind == "result":
                return

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
