"""What keeps a run from being run or recorded twice when deliveries or replicas race: the
compare-and-set of a run's start and outcome in the database (on SQLite and PostgreSQL),
and the rebuild of the job streams by several replicas at once."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy.engine import Engine
from sqlmodel import Session

from app import migrate
from app.admin.fleet import FleetKeeper
from app.models import Run, utcnow
from app.runqueue.fleet import keys
from app.runqueue.fleet.queue import FleetTiming, RedisRunQueue
from app.runs.recorder import RunRecorder
from sandbox.protocol import RunResult, Verdict
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

pytest_plugins = ["tests.support.postgres"]


def add_queued(engine: Engine, run_id: str, *, age_seconds: float = 0) -> None:
    with Session(engine) as session:
        session.add(
            Run(
                id=run_id,
                visitor="v",
                fair_owner="someone",
                code_sha256="0" * 64,
                code_bytes=8,
                code="print(1)",
                backend_requested="cpu",
                created_at=utcnow() - timedelta(seconds=age_seconds),
            )
        )
        session.commit()


def ok(run_id: str) -> RunResult:
    return RunResult(run_id, Verdict.OK, 0, "1\n", "", 5, "cpu", "cpu")


def races(engine: Engine) -> None:
    add_queued(engine, "r1")
    recorder = RunRecorder(engine, on_end=())

    async def scenario() -> None:
        starts = await asyncio.gather(*(recorder.started("r1", "cpu", "x", n) for n in (1, 2)))
        assert sorted(starts) == [False, True]  # one delivery starts it, the other is refused
        with Session(engine) as session:
            run = session.get(Run, "r1")
            assert run is not None and run.status == "running"
            winner = run.attempt
        assert not await recorder.finished("r1", ok("r1"), 3 - winner)  # not the one running
        assert await recorder.finished("r1", ok("r1"), winner)
        assert not await recorder.finished("r1", ok("r1"), winner)  # recorded once

    run_async(scenario())
    with Session(engine) as session:
        run = session.get(Run, "r1")
        assert run is not None and (run.status, run.verdict) == ("done", "ok")


def test_only_one_delivery_starts_and_ends_a_run_on_sqlite(engine: Engine) -> None:
    races(engine)


def test_only_one_delivery_starts_and_ends_a_run_on_postgresql(postgres_engine: Engine) -> None:
    migrate.upgrade(postgres_engine)
    races(postgres_engine)


def test_replicas_rebuilding_at_once_add_one_job_per_queued_run(
    engine: Engine, redis_server: RedisServer
) -> None:
    run_ids = [f"q{n}" for n in range(20)]
    for run_id in run_ids:
        add_queued(engine, run_id, age_seconds=60)
    add_queued(engine, "just-now")  # its replica is still queueing it: left alone

    async def scenario() -> list[tuple[int, int]]:
        recorder = RunRecorder(engine, on_end=())
        # "Just now" is within a heartbeat of the pass. A heartbeat of 0.2 s was shorter than
        # a busy machine's stall between adding that run and the pass reading it: the pass then
        # rightly found it old enough and added it (21 jobs for 20 runs, none twice).
        timing = FleetTiming(heartbeat_seconds=30, lease_seconds=60)
        queues = [RedisRunQueue(redis_server.url, recorder, timing) for _ in range(4)]
        try:
            return await asyncio.gather(*(FleetKeeper(engine, q).once() for q in queues))
        finally:
            for queue in queues:
                await queue.close()

    passes = run_async(scenario())
    assert sum(added for added, _ in passes) == len(run_ids)
    client = redis_server.client()
    assert client.lrange(keys.turns("cpu"), 0, -1) == ["someone"]  # they wait as their owner's
    waiting = client.lrange(keys.waiting("cpu", "someone"), 0, -1)
    assert sorted(job.split(" ", 1)[0] for job in waiting) == sorted(run_ids)
    assert client.get(keys.enqueued("just-now")) is None


def test_consumers_that_hold_nothing_and_went_quiet_are_forgotten(
    engine: Engine, redis_server: RedisServer
) -> None:
    client = redis_server.client()
    stream = keys.jobs("cpu")

    async def scenario() -> None:
        timing = FleetTiming(heartbeat_seconds=0.005, lease_seconds=0.01)
        queue = RedisRunQueue(redis_server.url, RunRecorder(engine, on_end=()), timing)
        try:
            await queue.ensure_groups()
            for run in ("r1", "r2"):
                client.xadd(stream, {"run": run, "request": "{}"})
            client.xreadgroup(keys.JOB_GROUP, "holds-one", {stream: ">"}, count=1)
            # A consumer that read a job and acknowledged it: it exists, holding nothing.
            [[_, [(entry_id, _)]]] = client.xreadgroup(
                keys.JOB_GROUP, "holds-none", {stream: ">"}, count=1
            )
            client.xack(stream, keys.JOB_GROUP, entry_id)
            await asyncio.sleep(0.2)
            await queue.ensure_groups()  # a pass that does not look for them
            assert len(client.xinfo_consumers(stream, keys.JOB_GROUP)) == 2
            await queue.ensure_groups(forget_idle=True)
        finally:
            await queue.close()

    run_async(scenario())
    names = [c["name"] for c in client.xinfo_consumers(stream, keys.JOB_GROUP)]
    assert names == ["holds-one"]  # its job is still pending: it stays to be taken over
