"""A runner agent in this process (app/agent) against a real redis-server, with executors
that fail the way a sandbox worker can: gone before the run was handed over (the run is
delivered again: the second delivery runs it), or lost mid-run (it ends `internal_error`,
never run again); and an agent takes no more runs at once than its worker runs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from app.agent.agent import Agent
from app.agent.executors import ScriptExecutor
from app.runqueue.fleet import liveness
from app.runqueue.fleet.queue import FleetTiming, RedisRunQueue
from app.runqueue.worker_socket import WorkerLost, WorkerUnreachable
from sandbox.protocol import (
    Backend,
    Event,
    RunRequest,
    RunResult,
    Started,
    Verdict,
    WorkerStatus,
)
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

TIMING = FleetTiming(heartbeat_seconds=0.1, lease_seconds=0.5)


class Observer:
    """Records what the queue reports, as the database would: first start wins, its delivery
    hears yes again, and only it may give the start back."""

    def __init__(self) -> None:
        self.starts: list[int] = []  # the attempts that started the run (and kept it)
        self.holders: dict[str, str] = {}  # run → the delivery that started it
        self.ends: dict[str, tuple[RunResult, int | None]] = {}
        self.ended = asyncio.Event()

    async def started(
        self, run_id: str, backend: str, device: str, attempt: int = 1, delivery: str = ""
    ) -> bool:
        if run_id not in self.holders:
            self.holders[run_id] = delivery
            self.starts.append(attempt)
            return True
        return bool(delivery) and delivery == self.holders[run_id]

    async def unstarted(self, run_id: str, delivery: str) -> bool:
        if self.holders.get(run_id) != delivery:
            return False
        del self.holders[run_id]
        self.starts.pop()
        return True

    async def finished(self, run_id: str, result: RunResult, attempt: int | None = None) -> bool:
        if run_id in self.ends:
            return False
        self.ends[run_id] = (result, attempt)
        self.ended.set()
        return True


class Flaky(ScriptExecutor):
    """The script, after `failure` on the first run only."""

    def __init__(self, failure: Exception, *, after_start: bool) -> None:
        super().__init__("cpu")
        self.failure = failure
        self.after_start = after_start
        self.calls = 0

    async def run(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        self.calls += 1
        if self.calls == 1:
            if self.after_start:
                yield Started("cpu", "flaky")
            raise self.failure
        async for event in super().run(request, cancel):
            yield event


def drive(server: RedisServer, executor: Flaky) -> tuple[Observer, RunResult, int | None]:
    async def scenario() -> tuple[Observer, RunResult, int | None]:
        observer = Observer()
        queue = RedisRunQueue(server.url, observer, TIMING)
        await queue.start()
        agent = Agent(queue.redis, executor, pool="cpu", slots=1, timing=TIMING)
        stop = asyncio.Event()
        running = asyncio.create_task(agent.run(stop))
        try:
            while not (await queue.status()).available:  # the agent's first heartbeat
                await asyncio.sleep(0.05)
            await queue.submit(RunRequest(id="r1", code="print('ran')", backend=Backend.CPU))
            await asyncio.wait_for(observer.ended.wait(), 10)
            result, attempt = observer.ends["r1"]
            return observer, result, attempt
        finally:
            stop.set()
            await asyncio.wait_for(running, 10)
            await queue.close()

    return run_async(scenario())


def test_a_worker_gone_before_the_handover_gets_the_run_delivered_again(
    redis_server: RedisServer,
) -> None:
    executor = Flaky(WorkerUnreachable("the sandbox worker is not running"), after_start=False)
    observer, result, attempt = drive(redis_server, executor)
    assert (result.verdict, result.stdout, attempt) == (Verdict.OK, "ran\n", 2)
    assert executor.calls == 2 and observer.starts == [2]


def test_a_worker_lost_mid_run_ends_it_internal_error_never_again(
    redis_server: RedisServer,
) -> None:
    executor = Flaky(WorkerLost("the sandbox worker closed the connection"), after_start=True)
    observer, result, attempt = drive(redis_server, executor)
    assert (result.verdict, attempt) == (Verdict.INTERNAL_ERROR, 1)
    assert "it was not run again" in result.detail
    assert executor.calls == 1 and observer.starts == [1]


class Counted(ScriptExecutor):
    """The script, each run taking a moment, with the most runs it had at once; its status
    says the worker runs `worker_slots` cpu runs at once (None: says nothing)."""

    def __init__(self, worker_slots: int | None) -> None:
        super().__init__("cpu")
        self.worker_slots = worker_slots
        self.running = self.most = 0

    async def status(self) -> WorkerStatus:
        status = await super().status()
        return replace(
            status, slots={} if self.worker_slots is None else {"cpu": self.worker_slots}
        )

    async def run(self, request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(0.3)
            async for event in super().run(request, cancel):
                yield event
        finally:
            self.running -= 1


@pytest.mark.parametrize(
    ("worker_slots", "slots", "at_once"),
    [
        (1, None, 1),  # as many as the worker runs
        (1, 4, 1),  # never more, whatever the command line says
        (3, 2, 2),  # fewer, when the command line says so
        (None, None, 2),  # a worker that does not say: two
    ],
)
def test_an_agent_takes_no_more_runs_at_once_than_its_worker_runs(
    redis_server: RedisServer, worker_slots: int | None, slots: int | None, at_once: int
) -> None:
    async def scenario() -> tuple[int, int]:
        observer = Observer()
        queue = RedisRunQueue(redis_server.url, observer, TIMING)
        await queue.start()
        executor = Counted(worker_slots)
        agent = Agent(queue.redis, executor, pool="cpu", slots=slots, timing=TIMING)
        stop = asyncio.Event()
        running = asyncio.create_task(agent.run(stop))
        try:
            while not (await queue.status()).available:
                await asyncio.sleep(0.05)
            [advertised] = await liveness.live_agents(queue.redis, "cpu")
            for n in range(4):
                await queue.submit(RunRequest(id=f"r{n}", code="print('ran')", backend=Backend.CPU))
            while len(observer.ends) < 4:
                await asyncio.sleep(0.05)
            return advertised.slots, executor.most
        finally:
            stop.set()
            await asyncio.wait_for(running, 10)
            await queue.close()

    advertised, most = run_async(scenario())
    assert (advertised, most) == (at_once, at_once)
