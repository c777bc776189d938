"""Running code: start a run, read it, follow it live (server-sent events), cancel it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from app.deps import (
    EngineDep,
    IdentityDep,
    LearnerDep,
    RunLimiterDep,
    RunQueueDep,
    SessionDep,
    identify,
)
from app.domain import RunRejected
from app.schemas import ErrorBody, RunAccepted, RunCreate, RunPublic
from app.services import items, learners, runs
from app.services.runs import RunOrigin
from sandbox.protocol import Finished, event_to_json

HEARTBEAT_SECONDS = 15
NOT_JSON = "Rejected: the request body is not valid JSON in UTF-8."


class RejectingRoute(APIRoute):
    """A body that is not JSON in UTF-8 is code that will never run: it gets the sandbox's
    `rejected` verdict (400), like any other code refused before running."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                if any(e["type"] == "json_invalid" for e in exc.errors()):
                    raise RunRejected(NOT_JSON) from None
                raise
            except HTTPException as exc:
                if exc.status_code == 400:  # the body could not be read at all
                    raise RunRejected(NOT_JSON) from None
                raise

        return handle


# Runs belong to a learner: the signed-in user's (cookie or bearer token) or the guest's.
router = APIRouter(
    prefix="/api/runs",
    tags=["runs"],
    dependencies=[Depends(identify)],
    route_class=RejectingRoute,
)


@router.post(
    "",
    status_code=202,
    responses={400: {"model": ErrorBody}, 429: {"model": ErrorBody}, 503: {"model": ErrorBody}},
)
async def start_run(
    body: RunCreate,
    session: SessionDep,
    identity: IdentityDep,
    engine: EngineDep,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
) -> RunAccepted:
    """Queue code to run; follow it at /api/runs/{id}/events."""
    item_id = items.item_row(session.connection(), slug=body.item).id if body.item else None
    scope = learners.resolve_or_create(session, identity)
    session.commit()
    session.close()  # give the connection back before waiting on the sandbox
    origin = RunOrigin(
        owner=identity.owner_key,
        learner_id=scope.learner_id,
        item_id=item_id,
        sample_index=body.sample,
    )
    run = await runs.submit(
        engine, queue, limiter, code=body.code, backend=body.backend, origin=origin
    )
    return RunAccepted(id=run.id, status=run.status)


@router.get("/{run_id}", responses={404: {"model": ErrorBody}})
async def get_run(run_id: str, scope: LearnerDep, engine: EngineDep) -> RunPublic:
    """The run as it stands: its output so far is in the events stream."""
    return RunPublic.of(runs.owned(engine, scope, run_id))


@router.post("/{run_id}/cancel", status_code=202, responses={404: {"model": ErrorBody}})
async def cancel_run(
    run_id: str, scope: LearnerDep, engine: EngineDep, queue: RunQueueDep
) -> RunAccepted:
    """Stop a queued or running run; it ends with verdict `killed`."""
    run = runs.owned(engine, scope, run_id)
    await queue.cancel(run_id)
    return RunAccepted(id=run.id, status=run.status)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, 404: {"model": ErrorBody}},
)
async def run_events(
    run_id: str, scope: LearnerDep, engine: EngineDep, queue: RunQueueDep
) -> StreamingResponse:
    """Server-sent events: queued, started, stdout, stderr, then result (the run)."""
    runs.owned(engine, scope, run_id)  # 404 before the stream starts
    if scope is not None:
        scope.session.close()  # a stream must not hold a connection

    async def stream() -> AsyncIterator[str]:
        events = runs.follow(engine, queue, run_id).__aiter__()
        pending: asyncio.Task[Any] | None = None
        while True:
            pending = pending or asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=HEARTBEAT_SECONDS)
            if not done:
                yield ": still running\n\n"  # keeps proxies from closing a quiet stream
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            if isinstance(event, Finished):
                # The stored run: what the result counted for is in the database now.
                payload = RunPublic.of(runs.get(engine, run_id)).model_dump()
                yield f"event: result\ndata: {json.dumps(payload)}\n\n"
                return
            data = event_to_json(event)
            kind = data.pop("type")
            yield f"event: {kind}\ndata: {json.dumps(data)}\n\n"

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
