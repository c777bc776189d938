"""An agent's upkeep beside its runs: its heartbeat (what it offers, and its worker's state),
its runs' leases, and watching for runs to stop (cancelled, or their delivery revoked).

It sees the agent through `Upkept`, the part of it the upkeep reads and sets, so that this
module sits below agent.py and never imports it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.agent.executors import Executor
from app.agent.metrics import AgentMetrics
from app.runqueue.fleet import jobs, keys, liveness
from app.runqueue.fleet.jobs import Delivery
from app.runqueue.fleet.queue import FleetTiming
from sandbox.protocol import WorkerStatus

log = logging.getLogger("backprop.agent")
WATCH_SECONDS = 0.25  # how often cancels are looked for (a cancel takes about this long)


@dataclass
class Held:
    """A run the agent has handed to its worker."""

    delivery: Delivery
    cancel: asyncio.Event = field(default_factory=asyncio.Event)


class Upkept(Protocol):
    """What the upkeep reads and sets of an agent (agent.py's Agent)."""

    redis: Redis
    executor: Executor
    pool: str
    slots: int | None
    timing: FleetTiming
    metrics: AgentMetrics
    agent_id: str
    worker: WorkerStatus
    held: dict[str, Held]
    changed: asyncio.Event
    stopping: bool

    @property
    def ready(self) -> bool: ...

    @property
    def capacity(self) -> int: ...

    def info(self) -> liveness.AgentInfo: ...


def say_capacity(agent: Upkept) -> None:
    runs_at_once = agent.worker.slots.get(agent.pool)
    if agent.slots and runs_at_once is not None and agent.slots > runs_at_once:
        log.warning(
            "--slots %d is more than the %d %s runs the worker runs at once: taking %d",
            agent.slots,
            runs_at_once,
            agent.pool,
            runs_at_once,
        )
    if agent.ready:
        log.info("worker ready: taking up to %d %s runs at once", agent.capacity, agent.pool)


async def beat_forever(agent: Upkept) -> None:
    """Ask the worker its state, advertise the agent and renew its runs' leases, every
    heartbeat until the agent stops."""
    while not agent.stopping:
        was = agent.ready, agent.capacity
        agent.worker = await agent.executor.status()
        if (agent.ready, agent.capacity) != was:
            agent.changed.set()
            say_capacity(agent)
        try:
            await liveness.advertise(agent.redis, agent.info(), agent.timing.lease_ms)
            for held in list(agent.held.values()):
                # Another delivery holding the claim (a rebuilt job's, after a wipe) does not
                # stop this one: the database decides which delivery runs the run, and tells
                # the other no (results.ask_to_start); a run ended elsewhere comes as a cancel.
                if not await jobs.renew(
                    agent.redis, held.delivery, agent.agent_id, agent.timing.lease_ms
                ):
                    log.info("run %s: another delivery holds its claim", held.delivery.run_id)
            agent.metrics.beat()
        except (RedisError, OSError) as exc:
            log.warning("heartbeat failed: %s", exc)
        await asyncio.sleep(agent.timing.heartbeat_seconds)


async def watch(agent: Upkept) -> None:
    """Stop runs that were cancelled, or whose delivery the database refused."""
    while not agent.stopping:
        await asyncio.sleep(min(WATCH_SECONDS, agent.timing.heartbeat_seconds))
        for held in list(agent.held.values()):
            run_id, token = held.delivery.run_id, held.delivery.token
            with contextlib.suppress(RedisError, OSError):
                if await agent.redis.exists(keys.cancel(run_id), keys.revoked(token)):
                    held.cancel.set()


async def reliably(step: Callable[[], Awaitable[object]], every: float, tries: int = 0) -> None:
    """Do `step`, again every `every` seconds while Redis cannot be reached (`tries` times
    at most, if given)."""
    attempt = 0
    while True:
        try:
            await step()
            return
        except (RedisError, OSError) as exc:
            attempt += 1
            if tries and attempt >= tries:
                log.warning("gave up on a step after %d tries: %s", attempt, exc)
                return
            await asyncio.sleep(every)
