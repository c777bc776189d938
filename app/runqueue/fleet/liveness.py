"""Which agents are alive: each renews a heartbeat key (its pool, slots, free slots and
device) that expires after the lease, so an agent that dies or is stopped (SIGSTOP) drops
out once its lease runs out. Also the recent run times per pool, for back-pressure."""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass

from redis.asyncio import Redis

from app.runqueue.fleet import keys

DURATIONS_KEPT = 50


@dataclass(frozen=True)
class AgentInfo:
    """What one agent offers, as its heartbeat says."""

    agent_id: str
    pool: str
    slots: int  # runs it takes at once
    free: int  # of which free now
    device: str  # the hardware its worker runs `pool` on
    ready: bool  # whether its worker runs code now

    @classmethod
    def from_json(cls, text: str) -> AgentInfo:
        return cls(**json.loads(text))


async def advertise(redis: Redis, info: AgentInfo, lease_ms: int) -> None:
    await redis.set(keys.agent(info.pool, info.agent_id), json.dumps(asdict(info)), px=lease_ms)


async def withdraw(redis: Redis, info: AgentInfo) -> None:
    """An agent stopping on purpose says so at once, rather than after its lease."""
    await redis.delete(keys.agent(info.pool, info.agent_id))


async def live_agents(redis: Redis, pool: str) -> list[AgentInfo]:
    """The agents of `pool` whose heartbeat has not expired and whose worker is ready."""
    names = [name async for name in redis.scan_iter(match=keys.agents(pool), count=100)]
    if not names:
        return []
    found = []
    for text in await redis.mget(names):
        if text is not None:  # expired between the scan and the read
            info = AgentInfo.from_json(str(text))
            if info.ready:
                found.append(info)
    return found


async def record_duration(redis: Redis, pool: str, seconds: float) -> None:
    async with redis.pipeline(transaction=False) as pipe:
        pipe.lpush(keys.durations(pool), round(seconds, 3))
        pipe.ltrim(keys.durations(pool), 0, DURATIONS_KEPT - 1)
        await pipe.execute()


async def median_duration(redis: Redis, pool: str) -> float | None:
    """The median of `pool`'s recent run times in seconds; None before any."""
    values = await redis.lrange(keys.durations(pool), 0, -1)
    return statistics.median(float(v) for v in values) if values else None
