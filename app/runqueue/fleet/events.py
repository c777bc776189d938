"""Live output: one Redis stream of events per run. The agent running it adds what the
worker streams; the web replica that records the outcome adds the end, so that a watcher who
reads the end finds the outcome in the database. Any replica's event stream reads it, and an
entry's id is the SSE id that a reconnecting browser resumes after.

The stream is trimmed (a run's whole output is in its result anyway) and expires a while
after the run ends; a wipe of Redis loses it, and watchers then read the database."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from redis.asyncio import Redis

from app.runqueue.base import EventEntry
from app.runqueue.fleet import keys
from sandbox.protocol import Event, Finished, event_from_json, event_to_json

MAX_EVENTS = 2000  # entries kept per run, about (trimming is approximate, hence cheap)
UNFINISHED_TTL_SECONDS = 24 * 3600  # a stream whose end never comes goes away after this
READ_BLOCK_MS = 1000
_ENTRY_ID = re.compile(r"^\d{1,20}-\d{1,20}$")


async def publish(redis: Redis, run_id: str, event: Event) -> str:
    """Add one event of a run in progress; its entry id."""
    key = keys.events(run_id)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.xadd(key, {"e": json.dumps(event_to_json(event))}, maxlen=MAX_EVENTS)
        pipe.expire(key, UNFINISHED_TTL_SECONDS)
        entry_id, _ = await pipe.execute()
    return str(entry_id)


async def end(redis: Redis, run_id: str, finished: Finished, ttl_seconds: int) -> None:
    """Add the run's last event; the stream then lives `ttl_seconds` for late watchers."""
    key = keys.events(run_id)
    async with redis.pipeline(transaction=False) as pipe:
        pipe.xadd(key, {"e": json.dumps(event_to_json(finished))}, maxlen=MAX_EVENTS)
        pipe.expire(key, ttl_seconds)
        await pipe.execute()


async def follow(redis: Redis, run_id: str, after: str | None) -> AsyncIterator[EventEntry]:
    """The run's events after entry `after` (from the first when it is not an entry id),
    live, up to Finished. Ends early when the stream is gone (expired, or lost with a wipe
    of Redis): the database then has what there is."""
    key = keys.events(run_id)
    last = after if after and _ENTRY_ID.match(after) else "0-0"
    if not await redis.exists(key):
        return
    while True:
        answer: Any = await redis.xread({key: last}, count=100, block=READ_BLOCK_MS)
        if not answer:
            if not await redis.exists(key):
                return
            continue
        for entry_id, fields in answer[0][1]:
            last = str(entry_id)
            event = event_from_json(json.loads(fields["e"]))
            yield last, event
            if isinstance(event, Finished):
                return
