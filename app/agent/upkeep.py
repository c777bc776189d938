"""An agent's upkeep beside its runs: its heartbeat (what it offers, and its worker's state),
its runs' leases, and watching for runs to stop (cancelled, or their delivery revoked)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from redis.exceptions import RedisError

from app.runqueue.fleet import jobs, keys, liveness

if TYPE_CHECKING:
    from app.agent.agent import Agent

log = logging.getLogger("backprop.agent")
WATCH_SECONDS = 0.25  # how often cancels are looked for (a cancel takes about this long)


def say_capacity(agent: Agent) -> None:
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


async def beat_forever(agent: Agent) -> None:
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
                delivery = held.delivery
                if not await jobs.renew(
                    agent.redis, delivery, agent.agent_id, agent.timing.lease_ms
                ):
                    held.cancel.set()  # another delivery has the run now
            agent.metrics.beat()
        except (RedisError, OSError) as exc:
            log.warning("heartbeat failed: %s", exc)
        await asyncio.sleep(agent.timing.heartbeat_seconds)


async def watch(agent: Agent) -> None:
    """Stop runs that were cancelled, or whose delivery the database refused."""
    while not agent.stopping:
        await asyncio.sleep(min(WATCH_SECONDS, agent.timing.heartbeat_seconds))
        for held in list(agent.held.values()):
            run_id, token = held.delivery.run_id, held.delivery.token
            with contextlib.suppress(RedisError, OSError):
                if await agent.redis.exists(keys.cancel(run_id), keys.revoked(token)):
                    held.cancel.set()
