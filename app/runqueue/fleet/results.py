"""How a run's start and outcome reach the database, which the agents cannot reach.

An agent holds no database credentials: it adds what happened to the results stream
(`started` with the delivery's attempt, then `finished` with the whole RunResult), and the
web replicas, one consumer group, read it and write the database. Each report is
acknowledged only once written, so a replica that dies mid-way leaves it pending, and
another takes it over after the lease (XAUTOCLAIM). Writing twice does no harm: both writes
are compare-and-sets on the run's status and attempt (app/runs/runs.RunRecorder):
  - a start is recorded only while the run is `queued`; when another delivery got there
    first (a duplicate, after a wipe of Redis say), this delivery is revoked, and its agent
    stops it;
  - an outcome is recorded only while the run has not ended, and only from the delivery
    that started it.
Whoever records the outcome then ends the run's event stream (fleet/events.py)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError
from redis.typing import EncodableT, FieldT

from app.runqueue.base import RunObserver
from app.runqueue.fleet import jobs, keys
from sandbox.protocol import RunResult

log = logging.getLogger(__name__)
READ_COUNT = 50
Finish = Callable[[str, RunResult, int | None], Awaitable[None]]


async def report_started(
    redis: Redis, run_id: str, attempt: int, token: str, backend: str, device: str
) -> None:
    fields: dict[FieldT, EncodableT] = {"kind": "started", "run": run_id, "attempt": attempt}
    fields |= {"token": token, "backend": backend, "device": device}
    await redis.xadd(keys.RESULTS, fields)


async def report_finished(redis: Redis, result: RunResult, attempt: int | None) -> None:
    fields: dict[FieldT, EncodableT] = {"kind": "finished", "run": result.id}
    fields |= {"result": json.dumps(result.to_json()), "attempt": attempt or ""}
    await redis.xadd(keys.RESULTS, fields)


class ResultReader:
    """One web replica's consumer of the results stream."""

    def __init__(
        self,
        redis: Redis,
        observer: RunObserver,
        finish: Finish,
        *,
        consumer: str,
        lease_ms: int,
        block_ms: int,
    ) -> None:
        self.redis = redis
        self.observer = observer
        self.finish = finish
        self.consumer = consumer
        self.lease_ms = lease_ms
        self.block_ms = block_ms
        self.stopping = False  # a cancel that lands inside a Redis call can be lost: see close

    async def run_forever(self) -> None:
        while not self.stopping:
            try:
                await self.read_once()
            except (RedisError, OSError) as exc:
                log.warning("reading run results from Redis failed: %s", exc)
                await asyncio.sleep(self.block_ms / 1000)

    async def read_once(self) -> int:
        """Handle what is waiting (a dead replica's reports first); how many reports."""
        try:
            _, entries, *_ = await self.redis.xautoclaim(
                keys.RESULTS, keys.RESULT_GROUP, self.consumer, self.lease_ms, "0-0", READ_COUNT
            )
            if not entries:
                answer: Any = await self.redis.xreadgroup(
                    keys.RESULT_GROUP,
                    self.consumer,
                    {keys.RESULTS: ">"},
                    count=READ_COUNT,
                    block=self.block_ms,
                )
                entries = [entry for _, batch in answer or [] for entry in batch]
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            await jobs.ensure_group(self.redis, keys.RESULTS, keys.RESULT_GROUP)
            return 0
        for entry_id, fields in entries:
            if fields:
                await self.handle(fields)
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.xack(keys.RESULTS, keys.RESULT_GROUP, entry_id)
                pipe.xdel(keys.RESULTS, entry_id)
                await pipe.execute()
        return len(entries)

    async def handle(self, fields: dict[str, str]) -> None:
        run_id = fields["run"]
        if fields["kind"] == "started":
            attempt = int(fields["attempt"])
            if not await self.observer.started(
                run_id, fields["backend"], fields["device"], attempt
            ):
                token = fields["token"]
                await self.redis.set(keys.revoked(token), 1, ex=jobs.BEGAN_TTL_SECONDS)
        elif fields["kind"] == "finished":
            result = RunResult.from_json(json.loads(fields["result"]))
            attempt_text = fields.get("attempt", "")
            await self.finish(run_id, result, int(attempt_text) if attempt_text else None)
