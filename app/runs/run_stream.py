"""Following a run as it goes: its events with their ids, from whichever source has them
(the run queue while it carries the run, else the database), and as server-sent event
frames for the events endpoints (of runs, and of exercise submissions)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from sqlalchemy.engine import Engine

from app.models import Run
from app.runqueue import RunQueue
from app.runs.runs import get
from app.runs.stream_slots import STREAM_LIFETIME_SECONDS
from sandbox.protocol import Event, Finished, Output, RunResult, Verdict, event_to_json

FOLLOW_POLL_SECONDS = 0.25
HEARTBEAT_SECONDS = 15


def stored_result(run: Run) -> RunResult:
    """The outcome kept in a run's row, in the sandbox's terms."""
    return RunResult(
        id=run.id,
        verdict=Verdict(run.verdict or Verdict.INTERNAL_ERROR),
        exit_code=run.exit_code,
        stdout=run.stdout,
        stderr=run.stderr,
        wall_ms=run.wall_ms or 0,
        backend=run.backend or "",
        device=run.device or "",
        detail=run.detail,
        cpu_ms=run.cpu_ms,
        max_memory_mb=run.max_memory_mb,
        truncated=run.truncated,
    )


async def follow(
    engine: Engine, queue: RunQueue, run_id: str, *, after: str | None = None
) -> AsyncIterator[tuple[str | None, Event]]:
    """Every event of the run with its id, from its start or after the event `after`, live
    while the queue carries it, ending with Finished. Where the queue has lost track of it,
    the stored output and result (following the database until the run ends): only the
    result for a watcher resuming, who has seen some output already and finds all of it in
    the result."""
    live = queue.events(run_id, after)
    if live is not None:
        async for event_id, event in live:
            yield event_id, event
            if isinstance(event, Finished):
                return
            after = event_id
    run = await asyncio.to_thread(get, engine, run_id)
    while run.status != "done":
        await asyncio.sleep(FOLLOW_POLL_SECONDS)
        run = await asyncio.to_thread(get, engine, run_id)
    if after is None and run.stdout:
        yield None, Output("stdout", run.stdout)
    if after is None and run.stderr:
        yield None, Output("stderr", run.stderr)
    yield None, Finished(stored_result(run))


async def sse_frames(
    engine: Engine,
    queue: RunQueue,
    run_id: str,
    after: str | None,
    final: Callable[[Run], dict[str, Any]],
) -> AsyncIterator[str]:
    """The run's events as SSE frames (after the event `after`), a comment every
    HEARTBEAT_SECONDS of quiet, and an end: the result (`final` of the stored run), or an
    `end` event once the stream has lived its longest."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STREAM_LIFETIME_SECONDS
    events = follow(engine, queue, run_id, after=after).__aiter__()
    pending: asyncio.Task[Any] | None = None
    try:
        while True:
            left = deadline - loop.time()
            if left <= 0:
                detail = "This stream lived its longest; read the run at /api/runs/{id}."
                yield f"event: end\ndata: {json.dumps({'detail': detail})}\n\n"
                return
            pending = pending or asyncio.ensure_future(events.__anext__())
            done, _ = await asyncio.wait({pending}, timeout=min(HEARTBEAT_SECONDS, left))
            if not done:
                yield ": still running\n\n"  # keeps proxies from closing a quiet stream
                continue
            try:
                entry = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            event_id, event = entry
            frame_id = f"id: {event_id}\n" if event_id else ""
            if isinstance(event, Finished):
                # The stored run: what the result counted for is in the database now.
                run = await asyncio.to_thread(get, engine, run_id)
                yield f"{frame_id}event: result\ndata: {json.dumps(final(run))}\n\n"
                return
            data = event_to_json(event)
            kind = data.pop("type")
            yield f"{frame_id}event: {kind}\ndata: {json.dumps(data)}\n\n"
    finally:
        if pending is not None:
            pending.cancel()
