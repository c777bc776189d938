"""A run's job enters the queue at most once, whatever the replicas rebuilding the job
streams race against: each other, and runs ending between a replica's read of the database
and its writes to Redis. Hundreds of rounds, randomised pauses in that window, and two busy
loops on the CPUs the whole time (the race showed on a busy machine only).

A job added twice is a run delivered twice: the one decision that a job enters the queue is
the SET NX of its enqueue marker (app/runqueue/fleet/waiting.py), and the marker must
outlive the run's end for a pass that read the run as queued before it ended
(app/runqueue/fleet/queue.py `finish`)."""

from __future__ import annotations

import asyncio
import multiprocessing
import random
from collections import Counter
from collections.abc import Iterator

import pytest
from sqlalchemy.engine import Engine

from app.admin.fleet import FleetKeeper
from app.runqueue.fleet import keys
from app.runqueue.fleet.queue import FleetTiming, RedisRunQueue
from app.runs.recorder import RunRecorder
from sandbox.protocol import RunResult, Verdict
from tests.scaleout.test_fleet_cas import add_queued
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

pytestmark = pytest.mark.fleet
ROUNDS = 200
REPLICAS = 4


def _spin() -> None:
    while True:
        pass


@pytest.fixture
def busy_cpus() -> Iterator[None]:
    """Two busy loops, one per core of the machine the suite is sized for."""
    spinners = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(2)]
    for spinner in spinners:
        spinner.start()
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.join()


def test_no_job_is_added_twice_while_runs_end_during_rebuilds(
    engine: Engine, redis_server: RedisServer, busy_cpus: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(20261129)
    original_restore = RedisRunQueue.restore

    async def hesitant_restore(self: RedisRunQueue, requests: list) -> int:  # type: ignore[type-arg]
        # The window the race lives in: the pass has read these runs as queued; runs may end
        # before it writes.
        await asyncio.sleep(rng.uniform(0, 0.01))
        return await original_restore(self, requests)

    monkeypatch.setattr(RedisRunQueue, "restore", hesitant_restore)
    ended: set[str] = set()
    made = 0

    async def scenario() -> None:
        nonlocal made
        recorder = RunRecorder(engine, on_end=())
        timing = FleetTiming(heartbeat_seconds=30, lease_seconds=60)
        queues = [RedisRunQueue(redis_server.url, recorder, timing) for _ in range(REPLICAS)]
        keepers = [FleetKeeper(engine, queue) for queue in queues]
        try:
            for _ in range(ROUNDS):
                # A few runs accepted a while ago (so every pass restores them) ...
                for _ in range(rng.randint(0, 2)):
                    add_queued(engine, f"r{made}", age_seconds=120)
                    made += 1
                waiting = [f"r{n}" for n in range(made) if f"r{n}" not in ended]
                # ... and some of those still waiting end while the replicas rebuild.
                ending = rng.sample(waiting, k=min(len(waiting), rng.randint(0, 2)))

                async def end(run_id: str) -> None:
                    await asyncio.sleep(rng.uniform(0, 0.01))
                    result = RunResult.refused(run_id, Verdict.KILLED, "Cancelled.")
                    await queues[0].finish(run_id, result, None)
                    ended.add(run_id)

                await asyncio.gather(*(k.once() for k in keepers), *(end(r) for r in ending))
        finally:
            for queue in queues:
                await queue.close()

    run_async(scenario())
    jobs = redis_server.client().lrange(keys.waiting("cpu", "someone"), 0, -1)
    counts = Counter(job.split(" ", 1)[0] for job in jobs)
    twice = {run_id: n for run_id, n in counts.items() if n > 1}
    assert twice == {}, f"jobs added more than once, of {made} runs: {twice}"
    never = {f"r{n}" for n in range(made)} - set(counts) - ended
    assert never == set(), f"runs still queued that no replica added: {never}"
