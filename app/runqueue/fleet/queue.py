"""The Redis adapter: submit, watch, cancel and status, over the fleet's streams."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import secrets
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.runqueue.base import EventEntry, QueueRefused, RunObserver
from app.runqueue.fleet import CANCELLED, MACHINE_STOPPED, events, jobs, keys, liveness, waiting
from app.runqueue.fleet.jobs import turn_of
from app.runqueue.fleet.results import ResultReader
from sandbox.protocol import (
    Backend,
    Finished,
    Queued,
    RunRequest,
    RunResult,
    Verdict,
    WorkerState,
    WorkerStatus,
)

log = logging.getLogger(__name__)
DEFAULT_RUN_SECONDS = 5.0  # what a run is taken to last before a pool has finished any
NO_POOL_RETRY_SECONDS = 30
UNREACHABLE_RETRY_SECONDS = 5
FORGET_AFTER_LEASES = 10  # a consumer silent this long, holding nothing, has gone
# SET the cancel mark; answer whether a delivery has handed the run to a worker already.
_CANCEL = """
redis.call('SET', KEYS[1], '1', 'EX', ARGV[1])
return redis.call('EXISTS', KEYS[2])
"""


@dataclass(frozen=True)
class FleetTiming:
    """The fleet's clocks. Agents renew their heartbeat and their runs' leases every
    `heartbeat_seconds`; one silent for `lease_seconds` counts as gone."""

    heartbeat_seconds: float = 2.0
    lease_seconds: float = 10.0
    events_ttl_seconds: int = 600  # how long a finished run's live events stay readable
    max_wait_seconds: float = 60.0  # the longest wait a new run is queued for

    @property
    def lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)


def pool_of(backend: Backend, cuda_alive: bool) -> str:
    """The pool a run asks for: `auto` takes the GPU pool while one of its agents lives."""
    if backend is Backend.AUTO:
        return "cuda" if cuda_alive else "cpu"
    return backend.value


class RedisRunQueue:
    """Runs go to the job stream of their pool; any agent of it runs them; this replica's
    share of the results stream writes the outcomes through `observer`."""

    def __init__(self, url: str, observer: RunObserver, timing: FleetTiming) -> None:
        self.redis: Redis = Redis.from_url(url, decode_responses=True)
        self.observer = observer
        self.timing = timing
        consumer = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.reader = ResultReader(
            self.redis,
            observer,
            self.finish,
            consumer=consumer,
            lease_ms=timing.lease_ms,
            block_ms=int(timing.heartbeat_seconds * 1000),
        )
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        with contextlib.suppress(RedisError, OSError):  # the reader keeps trying
            await self.ensure_groups(forget_idle=True)
        task = asyncio.create_task(self.reader.run_forever())
        self.tasks.add(task)

    async def ensure_groups(self, *, forget_idle: bool = False) -> None:
        """The job streams and the results stream with their groups (made again after a
        wipe); with `forget_idle`, less the consumers that have been gone a while (ten
        leases, holding nothing)."""
        streams = [(keys.jobs(pool), keys.JOB_GROUP) for pool in keys.POOLS]
        for stream, group in [*streams, (keys.RESULTS, keys.RESULT_GROUP)]:
            await jobs.ensure_group(self.redis, stream, group)
            if forget_idle:
                idle_ms = FORGET_AFTER_LEASES * self.timing.lease_ms
                await jobs.forget_idle_consumers(self.redis, stream, group, idle_ms)

    async def submit(self, request: RunRequest) -> None:
        try:
            pool = await self._admit(request)
        except QueueRefused as exc:
            refused = exc
        except (RedisError, OSError) as exc:
            log.warning("run %s refused: Redis cannot be reached: %s", request.id, exc)
            refused = QueueRefused(
                "Runs cannot be queued right now; try again in a few seconds.",
                UNREACHABLE_RETRY_SECONDS,
            )
        else:
            log.info("run %s queued for the %s pool", request.id, pool)
            return
        result = RunResult.refused(request.id, Verdict.REJECTED, refused.detail)
        await self.finish(request.id, result, None)
        raise refused

    async def _admit(self, request: RunRequest) -> str:
        """Queue the run in its pool, unless no agent of it lives or its queue is long."""
        cuda = await liveness.live_agents(self.redis, "cuda")
        pool = pool_of(request.backend, bool(cuda))
        agents = cuda if pool == "cuda" else await liveness.live_agents(self.redis, pool)
        if not agents:
            raise QueueRefused(
                f"No code runner of the {pool} pool is running; try again later.",
                NO_POOL_RETRY_SECONDS,
            )
        slots = max(1, sum(agent.slots for agent in agents))
        queue = await waiting.queue_of(self.redis, pool, turn_of(request.id, request.owner))
        queued = queue.depth
        typical = await liveness.median_duration(self.redis, pool) or DEFAULT_RUN_SECONDS
        # Runs the pool can drain within the longest wait (at least one round of its slots).
        drained = max(slots, math.floor(slots * self.timing.max_wait_seconds / typical))
        if queued >= drained:
            retry = math.ceil((queued - drained + 1) * typical / slots)
            raise QueueRefused(
                f"The {pool} code runners have {queued} runs waiting; try again in about "
                f"{retry} s.",
                retry,
            )
        # Its place in turn order: a newcomer's job goes before a busy owner's backlog.
        estimate = round(math.ceil(queue.place / slots) * typical, 1)
        await events.publish(self.redis, request.id, Queued(queue.place, estimate))
        body = json.dumps(request.to_json())
        await waiting.enqueue(self.redis, pool, request.id, body, request.owner)
        return pool

    async def restore(self, requests: list[RunRequest]) -> int:
        """Queue the runs the database holds as `queued`, but for those whose job is queued
        already (whichever replica gets there first adds it); how many this call added."""
        if not requests:
            return 0
        cuda = bool(await liveness.live_agents(self.redis, "cuda"))
        added = 0
        for request in requests:
            pool, body = pool_of(request.backend, cuda), json.dumps(request.to_json())
            added += await waiting.enqueue(self.redis, pool, request.id, body, request.owner)
        return added

    async def held(self, run_ids: list[str]) -> set[str]:
        """Which of these runs a live delivery holds (its lease renewed)."""
        if not run_ids:
            return set()
        found = await self.redis.mget([keys.claim(run_id) for run_id in run_ids])
        return {run_id for run_id, holder in zip(run_ids, found, strict=True) if holder}

    async def abandon(self, run_id: str) -> None:
        """End a started run whose machine is gone: never run again."""
        result = RunResult.refused(run_id, Verdict.INTERNAL_ERROR, MACHINE_STOPPED)
        await self.finish(run_id, result, None)

    async def finish(self, run_id: str, result: RunResult, attempt: int | None) -> None:
        """Record the outcome; if that took, end the run's live events with it."""
        if not await self.observer.finished(run_id, result, attempt):
            return
        try:
            await events.end(self.redis, run_id, Finished(result), self.timing.events_ttl_seconds)
            # Whatever still holds the run (an agent that was stopped, say, and resumes) stops.
            await self.redis.set(keys.cancel(run_id), 1, ex=jobs.BEGAN_TTL_SECONDS)
            # Its enqueue marker outlives the run by ENDED_MARKER_TTL: a rebuild pass that read
            # the run as queued before it ended must not add its job again (the marker's SET
            # NX is the one decision that a job enters the queue: waiting.py).
            await self.redis.expire(keys.enqueued(run_id), jobs.ENDED_MARKER_TTL_SECONDS)
        except (RedisError, OSError) as exc:  # watchers then read the database
            log.warning("run %s: its end could not be streamed: %s", run_id, exc)

    def events(self, run_id: str, after: str | None = None) -> AsyncIterator[EventEntry]:
        return self._events(run_id, after)

    async def _events(self, run_id: str, after: str | None) -> AsyncIterator[EventEntry]:
        with contextlib.suppress(RedisError, OSError):  # ends early: the database has it
            async for entry in events.follow(self.redis, run_id, after):
                yield entry

    async def cancel(self, run_id: str) -> None:
        """Mark the run cancelled: an agent running it stops it, and none starts it. One
        that no agent has started ends `killed` now, in the database."""
        ttl = jobs.BEGAN_TTL_SECONDS
        try:
            began = await self.redis.eval(_CANCEL, 2, keys.cancel(run_id), keys.began(run_id), ttl)
        except (RedisError, OSError) as exc:
            log.warning("run %s: cancel could not reach Redis: %s", run_id, exc)
            raise QueueRefused(
                "Runs cannot be cancelled right now; try again in a few seconds.",
                UNREACHABLE_RETRY_SECONDS,
            ) from None
        if not began:  # not started, or Redis was wiped since: the database decides
            result = RunResult.refused(run_id, Verdict.KILLED, CANCELLED)
            await self.finish(run_id, result, None)

    async def status(self) -> WorkerStatus:
        """The fleet as one worker: ready while any pool has a live agent."""
        try:
            pools = {pool: await liveness.live_agents(self.redis, pool) for pool in keys.POOLS}
            queue = {pool: await waiting.depth(self.redis, pool) for pool in keys.POOLS}
        except (RedisError, OSError) as exc:
            return WorkerStatus.unavailable(f"Code cannot run right now: Redis: {exc}.")
        devices = {pool: agents[0].device for pool, agents in pools.items() if agents}
        if not devices:
            return WorkerStatus.unavailable("Code cannot run right now: no code runner is up.")
        counts = ", ".join(f"{len(pools[pool])} {pool}" for pool in devices)
        device = devices.get("cuda") or devices["cpu"]
        absent = {
            pool: f"No code runner with a {pool.upper()} backend is connected to this server."
            for pool in keys.POOLS
            if pool not in devices
        }
        return WorkerStatus(
            WorkerState.READY,
            list(devices),
            device,
            devices,
            f"ready: {counts}",
            queue,
            absent=absent,
        )

    async def workers(self) -> dict[str, int]:
        """Live agents per pool (each in front of one sandbox worker); none while Redis is
        unreachable."""
        try:
            return {p: len(await liveness.live_agents(self.redis, p)) for p in keys.POOLS}
        except (RedisError, OSError):
            return dict.fromkeys(keys.POOLS, 0)

    async def close(self) -> None:
        # A cancel that lands while redis-py waits on a blocking read may be turned into a
        # closed connection, which the reader's loop survives: it also stops at its next turn.
        self.reader.stopping = True
        for task in self.tasks:
            task.cancel()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=self.timing.heartbeat_seconds + 1)
        await self.redis.aclose()
