"""A wipe of Redis in the middle of a run's start never runs its code twice: the database
decides which delivery starts a run before its code reaches a worker.

Two agents in this process share a real redis-server. The first takes the run; Redis is
wiped (FLUSHALL) at the worst moment, as the replica handles that agent's start:
  - `question`: before the start reached the database (the report is lost): the database
    still says `queued`, so the rebuild queues the run again at once, and the second agent
    takes it while the first holds it;
  - `answer`: after the start was written, before its answer reached the agent (the replica
    then fails): the first agent must hear yes again, and no rebuild happens.
Either way the code runs once and the run ends once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from app.agent.agent import Agent
from app.agent.executors import ScriptExecutor
from app.runqueue.fleet import keys
from app.runqueue.fleet.queue import FleetTiming, RedisRunQueue
from sandbox.protocol import Backend, Event, Finished, RunRequest, RunResult, Verdict
from tests.runqueue.test_agent import Observer
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

# A heartbeat long enough that the second agent takes the rebuilt job before the first
# agent's next renewal sets its claim again (the window a wipe opens).
TIMING = FleetTiming(heartbeat_seconds=0.5, lease_seconds=2.5)
REQUEST = RunRequest(id="r1", code="print('ran')", backend=Backend.CPU)


class Counting(ScriptExecutor):
    """The script, counting the runs handed to it (shared by both agents)."""

    def __init__(self, handed: list[str]) -> None:
        super().__init__("cpu")
        self.handed = handed

    async def run(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        self.handed.append(request.id)
        await asyncio.sleep(0.2)
        if cancel.is_set():  # as the worker stops a run it is told to cancel
            yield Finished(RunResult.refused(request.id, Verdict.KILLED, "cancelled"))
            return
        async for event in super().run(request, cancel):
            yield event


class Wiped(Observer):
    """The database as Observer keeps it, with Redis wiped while the first start is handled
    (before or after it is written), the replica failing there, and a rebuild pass at once,
    as the fleet's keeper would make (app/admin/fleet.py)."""

    def __init__(self, queue: RedisRunQueue | None, lost: str) -> None:
        super().__init__()
        self.queue = queue
        self.lost = lost
        self.wiped = False

    async def started(
        self, run_id: str, backend: str, device: str, attempt: int = 1, delivery: str = ""
    ) -> bool:
        if self.wiped or self.queue is None:
            return await super().started(run_id, backend, device, attempt, delivery)
        self.wiped = True
        if self.lost == "answer":
            await super().started(run_id, backend, device, attempt, delivery)
        await self.queue.redis.flushall()
        await self.queue.ensure_groups()
        if run_id not in self.holders:  # still queued in the database: queued again
            await self.queue.restore([REQUEST])
        raise RedisConnectionError("the replica lost Redis while handling the start")


def race(server: RedisServer, lost: str) -> tuple[list[str], Observer]:
    async def scenario() -> tuple[list[str], Observer]:
        observer = Wiped(None, lost)
        queue = RedisRunQueue(server.url, observer, TIMING)
        observer.queue = queue
        await queue.start()
        handed: list[str] = []
        agents = [
            Agent(queue.redis, Counting(handed), pool="cpu", slots=1, timing=TIMING)
            for _ in range(2)
        ]
        stop = asyncio.Event()
        running = [asyncio.create_task(agent.run(stop)) for agent in agents]
        try:
            while not (await queue.status()).available:  # the agents' first heartbeats
                await asyncio.sleep(0.05)
            await queue.submit(REQUEST)
            await asyncio.wait_for(observer.ended.wait(), 30)
            # Then until both agents hold nothing: a second delivery has ended too by then.
            while any(agent.tasks for agent in agents):
                await asyncio.sleep(0.05)
            return handed, observer
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*running), 30)
            await queue.close()

    return run_async(scenario())


@pytest.mark.parametrize("lost", ["question", "answer"])
def test_a_wipe_of_redis_during_a_start_never_runs_the_code_twice(
    redis_server: RedisServer, lost: str
) -> None:
    handed, observer = race(redis_server, lost)
    assert handed == ["r1"], f"the code reached a worker {len(handed)} times"
    assert len(observer.starts) == 1
    result: RunResult = observer.ends["r1"][0]
    assert (result.verdict, result.stdout) == (Verdict.OK, "ran\n")


class Gated(Observer):
    """The database, answering the first start only once `gate` opens."""

    def __init__(self) -> None:
        super().__init__()
        self.asked = asyncio.Event()
        self.gate = asyncio.Event()

    async def started(
        self, run_id: str, backend: str, device: str, attempt: int = 1, delivery: str = ""
    ) -> bool:
        self.asked.set()
        await self.gate.wait()
        return await super().started(run_id, backend, device, attempt, delivery)


def test_a_claim_taken_while_the_start_is_asked_does_not_stop_the_run(
    redis_server: RedisServer,
) -> None:
    """After a wipe, a rebuilt job's delivery can hold the claim key for a moment while the
    first delivery waits for its answer. The database's yes decides: the first delivery's
    lease renewal failing meanwhile must not make it drop a run the database gave it."""

    async def scenario() -> tuple[list[str], RunResult]:
        observer = Gated()
        queue = RedisRunQueue(redis_server.url, observer, TIMING)
        await queue.start()
        handed: list[str] = []
        agent = Agent(queue.redis, Counting(handed), pool="cpu", slots=1, timing=TIMING)
        stop = asyncio.Event()
        running = asyncio.create_task(agent.run(stop))
        try:
            while not (await queue.status()).available:
                await asyncio.sleep(0.05)
            await queue.submit(REQUEST)
            await asyncio.wait_for(observer.asked.wait(), 30)
            await queue.redis.set(keys.claim(REQUEST.id), "another/1")  # as a rebuilt job's
            beaten = agent.metrics.last_beat
            while agent.metrics.last_beat == beaten:  # a renewal has met the other claim
                await asyncio.sleep(0.05)
            await queue.redis.delete(keys.claim(REQUEST.id))  # that delivery heard no
            observer.gate.set()
            await asyncio.wait_for(observer.ended.wait(), 30)
            return handed, observer.ends[REQUEST.id][0]
        finally:
            stop.set()
            await asyncio.wait_for(running, 30)
            await queue.close()

    handed, result = run_async(scenario())
    assert handed == ["r1"] and (result.verdict, result.stdout) == (Verdict.OK, "ran\n")
