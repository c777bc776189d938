"""Running code: start a run, read it, follow it live (server-sent events), cancel it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException

from app.deps import (
    ClientDep,
    EngineDep,
    IdempotencyKey,
    IdentityDep,
    LearnerDep,
    RunLimiterDep,
    RunQueueDep,
    SettingsDep,
    StreamSlotsDep,
    identify,
)
from app.domain import RunRejected, SandboxBusy
from app.models import Run
from app.runqueue import QueueRefused
from app.runs import run_stream, runs
from app.runs.run_origin import origin_for
from app.runs.schemas import RunAccepted, RunCreate, RunPublic
from app.web.schemas import errors


async def _run_token(
    x_run_token: Annotated[str | None, Header(max_length=64)] = None,
    token: Annotated[str | None, Query(max_length=64)] = None,
) -> str | None:
    """The capability token a cookie-less client was given for its run."""
    return x_run_token or token


RunToken = Annotated[str | None, Depends(_run_token)]
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
    responses=errors(401, 403, 404, 413),
)


@router.post(
    "",
    status_code=202,
    responses=errors(400, 422, 429, 503),
)
async def start_run(
    body: RunCreate,
    identity: IdentityDep,
    client: ClientDep,
    engine: EngineDep,
    queue: RunQueueDep,
    limiter: RunLimiterDep,
    settings: SettingsDep,
    idempotency_key: IdempotencyKey = None,
) -> RunAccepted:
    """Queue code to run; follow it at /api/runs/{id}/events. A client with neither cookies
    nor a bearer token gets a capability token for the run in the answer.

    Send an `Idempotency-Key` header to retry safely: the same key from the same owner
    (account, browser, or address of a cookie-less client) answers with the run it started
    first, as it stands now (its id, current status and token), and starts nothing; the
    same key with different code, backend or sample is refused with 422."""
    origin = await asyncio.to_thread(
        origin_for, engine, identity, client=client, item_slug=body.item, sample=body.sample
    )
    submitted = await runs.submit(
        engine,
        queue,
        limiter,
        code=body.code,
        backend=body.backend,
        origin=origin,
        token_secret=settings.resolved_secret_key(),
        idempotency_key=idempotency_key,
    )
    return RunAccepted.of(submitted)


@router.get("/{run_id}")
def get_run(run_id: str, scope: LearnerDep, token: RunToken, engine: EngineDep) -> RunPublic:
    """The run as it stands: its output so far is in the events stream."""
    return RunPublic.of(runs.owned(engine, scope, run_id, token=token))


@router.post("/{run_id}/cancel", status_code=202, responses=errors(503))
async def cancel_run(
    run_id: str, scope: LearnerDep, token: RunToken, engine: EngineDep, queue: RunQueueDep
) -> RunAccepted:
    """Stop a queued or running run; it ends with verdict `killed` (a run that has ended
    keeps its verdict)."""
    run = await asyncio.to_thread(runs.owned, engine, scope, run_id, token=token)
    try:
        await queue.cancel(run_id)
    except QueueRefused as exc:
        raise SandboxBusy(exc.detail, exc.retry_after_seconds) from None
    return RunAccepted(id=run.id, status=run.status)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}}, **errors(429)},
)
async def run_events(
    run_id: str,
    scope: LearnerDep,
    token: RunToken,
    identity: IdentityDep,
    engine: EngineDep,
    queue: RunQueueDep,
    slots: StreamSlotsDep,
    last_event_id: Annotated[str | None, Header(max_length=64)] = None,
) -> StreamingResponse:
    """Server-sent events: queued, started, stdout, stderr, phase, then result (the run). Each
    event's `id` lets a reconnecting client resume after it (the Last-Event-ID header, which
    browsers send by themselves), on any server of the app."""
    # 404 before the stream starts (the learner dependency left no connection checked out)
    await asyncio.to_thread(runs.owned, engine, scope, run_id, token=token)
    # 429 beyond the visitor's open streams, counted across every replica.
    ticket = await asyncio.to_thread(slots.take, identity.owner_key)

    async def stream() -> AsyncIterator[str]:
        try:
            async for frame in run_stream.sse_frames(engine, queue, run_id, last_event_id, _public):
                yield frame
        finally:
            # Handed to a thread and not awaited: this runs as the stream is torn down (a
            # closed tab), where an await may never be resumed.
            asyncio.get_running_loop().run_in_executor(None, slots.give_back, ticket)

    return StreamingResponse(
        stream(),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


def _public(run: Run) -> dict[str, Any]:
    return RunPublic.of(run).model_dump()
