"""How a run's start and outcome reach the database, which the agents cannot reach.

An agent holds no database credentials: it adds what happened to the results stream
(`started` with the delivery's attempt, then `finished` with the whole RunResult), and the
web replicas, one consumer group, read it and write the database. The start is asked
before the code reaches a worker (`ask_to_start`): the agent waits for the database's
answer, so the database alone decides which delivery runs a run, whatever Redis loses (an
answer lost is asked for again, and the delivery that started the run hears yes again).
Each report is acknowledged only once written, so a replica that dies mid-way leaves it
pending, and another takes it over after the lease (XAUTOCLAIM). Writing twice does no
harm: the writes are compare-and-sets on the run's status and delivery (recorder.RunRecorder):
  - a start is recorded only while the run is `queued`; when another delivery got there
    first (a duplicate, after a wipe of Redis say), this delivery is told no (and revoked,
    for agents that did not ask first), and its code never runs;
  - a start is given back (`unstarted`) only by the delivery that made it, whose worker
    could not be reached: the run waits again, for its next delivery;
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
from app.runqueue.fleet.jobs import Delivery
from sandbox.protocol import RunResult

log = logging.getLogger(__name__)
READ_COUNT = 50
ANSWER_TTL_SECONDS = 600  # far longer than an agent waits for it
Finish = Callable[[str, RunResult, int | None], Awaitable[None]]


async def report_started(
    redis: Redis, run_id: str, attempt: int, token: str, backend: str, device: str
) -> None:
    fields: dict[FieldT, EncodableT] = {"kind": "started", "run": run_id, "attempt": attempt}
    fields |= {"token": token, "backend": backend, "device": device}
    await redis.xadd(keys.RESULTS, fields)


async def ask_to_start(
    redis: Redis, delivery: Delivery, backend: str, *, every: float, cancel: asyncio.Event
) -> bool | None:
    """Whether the database started the run for this delivery (None: it was cancelled
    while asking). Asked again every `every` seconds until answered: a replica down, or a
    wipe of Redis, loses the question or the answer, never the decision."""
    fields: dict[FieldT, EncodableT] = {"kind": "started", "run": delivery.run_id, "ask": 1}
    fields |= {"attempt": delivery.deliveries, "token": delivery.token}
    return await _ask(redis, fields | {"backend": backend, "device": ""}, every, cancel)


async def give_back(redis: Redis, delivery: Delivery, *, every: float) -> None:
    """Undo this delivery's start in the database (its worker could not be reached, so the
    code never ran), and wait until that is written: the run's next delivery may start it."""
    fields: dict[FieldT, EncodableT] = {"kind": "unstarted", "run": delivery.run_id, "ask": 1}
    await _ask(redis, fields | {"token": delivery.token}, every, asyncio.Event())


async def _ask(
    redis: Redis, fields: dict[FieldT, EncodableT], every: float, cancel: asyncio.Event
) -> bool | None:
    answer_key = keys.answer(str(fields["token"]), str(fields["kind"]))
    while not cancel.is_set():
        try:
            await redis.xadd(keys.RESULTS, fields)
            answer = await redis.blpop([answer_key], timeout=every)
        except (RedisError, OSError) as exc:
            log.warning("run %s: asking the database failed: %s", fields["run"], exc)
            await asyncio.sleep(every)
            continue
        if answer is not None:
            return bool(answer[1] == "1")
    return None


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
        run_id, token = fields["run"], fields.get("token", "")
        if fields["kind"] == "started":
            attempt = int(fields["attempt"])
            yes = await self.observer.started(
                run_id, fields["backend"], fields["device"], attempt, token
            )
            if not yes:
                await self.redis.set(keys.revoked(token), 1, ex=jobs.BEGAN_TTL_SECONDS)
            if fields.get("ask"):
                await self._answer(token, "started", yes)
        elif fields["kind"] == "unstarted":
            await self._answer(token, "unstarted", await self.observer.unstarted(run_id, token))
        elif fields["kind"] == "finished":
            result = RunResult.from_json(json.loads(fields["result"]))
            attempt_text = fields.get("attempt", "")
            await self.finish(run_id, result, int(attempt_text) if attempt_text else None)

    async def _answer(self, token: str, question: str, yes: bool) -> None:
        key = keys.answer(token, question)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.delete(key)  # an older answer, to the same question asked twice
            pipe.rpush(key, "1" if yes else "0")
            pipe.expire(key, ANSWER_TTL_SECONDS)
            await pipe.execute()
