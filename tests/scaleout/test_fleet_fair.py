"""The fleet hands jobs out fairly: owners in turn rather than first come, first served,
and no owner's runs fill an agent while others wait (a real redis-server; agents as real
processes playing scripted runs)."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient
from redis.asyncio import Redis
from sqlalchemy.engine import Engine

from app.main import create_app
from app.runqueue.fleet import jobs, keys, waiting
from app.settings import Settings
from tests.scaleout.conftest import Agents, stored, submit, wait_done, wait_until
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

HOLD = "# fake: hold"


async def _grouped(server: RedisServer) -> Redis:
    redis = Redis.from_url(server.url, decode_responses=True)
    await jobs.ensure_group(redis, keys.jobs("cpu"), keys.JOB_GROUP)
    return redis


async def _add(redis: Redis, *names: str) -> None:
    """Jobs named owner + number (a1 is owner a's first), added in this order."""
    for name in names:
        await waiting.enqueue(redis, "cpu", name, "{}", name[0])


def test_owners_take_turns_whatever_order_their_jobs_came_in(redis_server: RedisServer) -> None:
    async def scenario() -> list[str]:
        redis = await _grouped(redis_server)
        try:
            await _add(redis, "a1", "a2", "a3", "b1", "b2", "c1")
            order = []
            for _ in range(7):
                taken = await waiting.take(redis, "cpu", "agent", 1, cap=10, held={})
                order += [d.run_id for d in taken.deliveries]
            return order
        finally:
            await redis.aclose()

    assert run_async(scenario()) == ["a1", "b1", "c1", "a2", "b2", "a3"]


def test_owners_holding_their_share_of_an_agent_are_passed_over(
    redis_server: RedisServer,
) -> None:
    async def scenario() -> None:
        redis = await _grouped(redis_server)
        try:
            await _add(redis, "a2", "a3", "b1")
            assert await waiting.depth(redis, "cpu") == 3
            # A newcomer's job would go after one job of each owner; a's third after all.
            assert (await waiting.queue_of(redis, "cpu", "c")).place == 3
            assert (await waiting.queue_of(redis, "cpu", "a")).place == 4
            taken = await waiting.take(redis, "cpu", "agent", 2, cap=1, held={"a": 1})
            assert [(d.run_id, d.owner) for d in taken.deliveries] == [("b1", "b")]
            assert taken.held_back  # a's jobs wait for its run to end, or another agent
            assert await waiting.depth(redis, "cpu") == 2
            nothing = await waiting.take(redis, "cpu", "agent", 2, cap=1, held={"a": 1, "b": 1})
            assert nothing.deliveries == [] and nothing.held_back
            elsewhere = await waiting.take(redis, "cpu", "other-agent", 2, cap=1, held={})
            assert [d.run_id for d in elsewhere.deliveries] == ["a2"]  # one at most, there too
            pending = await redis.xpending(keys.jobs("cpu"), keys.JOB_GROUP)
            assert pending["pending"] == 2  # each taken job is delivered to its taker
        finally:
            await redis.aclose()

    run_async(scenario())


def test_a_job_in_the_stream_itself_is_taken_first(redis_server: RedisServer) -> None:
    """As a job queued by a version of the web side before the owners' lists would be."""

    async def scenario() -> list[str]:
        redis = await _grouped(redis_server)
        try:
            await _add(redis, "a1")
            await redis.xadd(keys.jobs("cpu"), {"run": "old", "request": "{}"})
            taken = await waiting.take(redis, "cpu", "agent", 2, cap=10, held={})
            return [d.run_id for d in taken.deliveries]
        finally:
            await redis.aclose()

    assert run_async(scenario()) == ["old", "a1"]


def test_a_newcomers_run_finishes_at_once_beside_a_client_holding_the_fleet(
    fleet_client: TestClient, fleet_settings: Settings, agents: Agents, engine: Engine
) -> None:
    agents(slots=2)
    held = [submit(fleet_client, HOLD) for _ in range(4)]  # one owner: this client's address
    wait_until(lambda: stored(engine, held[0][0]).status == "running", "a first run to start")
    time.sleep(0.5)  # time enough for a second of its runs to start, were it let
    # Another address, through another replica of the web side.
    with TestClient(create_app(fleet_settings), client=("198.51.100.9", 1234)) as newcomer:
        began = time.monotonic()
        run_id, _ = submit(newcomer, "print('hi')")
        run = wait_done(engine, run_id, timeout=10)
    assert (run.verdict, run.stdout) == ("ok", "hi\n")
    assert time.monotonic() - began < 3
    statuses = sorted(stored(engine, run_id).status for run_id, _ in held)
    assert statuses == ["queued", "queued", "queued", "running"]  # the other slot kept free
    for run_id, owner in held:
        fleet_client.post(f"/api/runs/{run_id}/cancel", headers=owner)
    for run_id, _ in held:
        assert wait_done(engine, run_id).verdict == "killed"
