"""A runner agent in this process (app/agent) against a real redis-server, with executors
that fail the way a sandbox worker can: gone before the run was handed over (the run is
delivered again: the second delivery runs it), or lost mid-run (it ends `internal_error`,
never run again)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from app.agent.agent import Agent
from app.agent.executors import ScriptExecutor
from app.runqueue.fleet.queue import FleetTiming, RedisRunQueue
from app.runqueue.worker_socket import WorkerLost, WorkerUnreachable
from sandbox.protocol import Backend, Event, RunRequest, RunResult, Started, Verdict
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

TIMING = FleetTiming(heartbeat_seconds=0.1, lease_seconds=0.5)


class Observer:
    """Records what the queue reports, as the database would: first start wins."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: dict[str, tuple[RunResult, int | None]] = {}
        self.ended = asyncio.Event()

    async def started(self, run_id: str, backend: str, device: str, attempt: int = 1) -> bool:
        self.starts.append(attempt)
        return len(self.starts) == 1

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
