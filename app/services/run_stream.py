"""Following a run as it goes: its events with their ids, from whichever source has them
(the run queue while it carries the run, else the database), for the events endpoint."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from sqlalchemy.engine import Engine

from app.runqueue import RunQueue
from app.services.runs import get, stored_result
from sandbox.protocol import Event, Finished, Output

FOLLOW_POLL_SECONDS = 0.25


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
