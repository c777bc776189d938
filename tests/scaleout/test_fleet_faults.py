"""The failure rule, with agents as real processes: a run whose agent dies after starting it
ends `internal_error` and is not run again; one whose delivery died before starting it is
delivered once more, and ends `internal_error` when that fails too; a stopped agent
(SIGSTOP) is found out by its lease."""

from __future__ import annotations

import os
import signal
import time

import redis
from fastapi.testclient import TestClient
from redis.asyncio import Redis
from sqlalchemy.engine import Engine

from app.runqueue.fleet import MACHINE_STOPPED, NEVER_STARTED, keys, waiting
from app.runqueue.fleet.jobs import Delivery
from tests.scaleout.conftest import (
    LEASE,
    Agents,
    agent_ready,
    stored,
    submit,
    wait_done,
    wait_until,
)
from tests.scaleout.test_fleet_runs import sse
from tests.support.aio import run_async
from tests.support.redis_server import RedisServer

HOLD = "print('holding')\n# fake: hold"


def running(engine: Engine, run_id: str) -> bool:
    return stored(engine, run_id).status == "running"


def test_a_started_run_whose_agent_is_killed_ends_internal_error_and_never_reruns(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    doomed = agents()
    run_id, owner = submit(fleet_client, HOLD)
    wait_until(lambda: running(engine, run_id), "the run to start")
    agents()  # a live agent of the pool, which takes the dead one's job over
    os.kill(doomed.pid, signal.SIGKILL)
    run = wait_done(engine, run_id)
    assert (run.verdict, run.detail, run.attempt) == ("internal_error", MACHINE_STOPPED, 1)
    kinds = [kind for _, kind, _ in sse(fleet_client, run_id, owner)]
    assert kinds.count("started") == 1  # the second agent did not run it again


def test_a_run_whose_only_agent_is_killed_mid_run_ends_internal_error(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    doomed = agents()
    run_id, _ = submit(fleet_client, HOLD)
    wait_until(lambda: running(engine, run_id), "the run to start")
    os.kill(doomed.pid, signal.SIGKILL)
    run = wait_done(engine, run_id)  # no agent left: the web side finds the lapsed claim
    assert (run.verdict, run.detail) == ("internal_error", MACHINE_STOPPED)


def _claim_and_vanish(server: RedisServer, consumer: str, *, reclaim: bool = False) -> str:
    """What a delivery that dies before starting its run leaves: the job taken (or taken
    over), and nothing else. Done here rather than by killing an agent, whose window between
    taking a job and starting it is far too short to hit with a signal."""
    client = server.client()
    stream = keys.jobs("cpu")
    if reclaim:
        time.sleep(LEASE + 0.2)
        _, entries, *_ = client.xautoclaim(stream, keys.JOB_GROUP, consumer, int(LEASE * 1000))
        assert len(entries) == 1
        return str(entries[0][1]["run"])

    async def take() -> list[Delivery]:
        async with Redis.from_url(server.url, decode_responses=True) as redis:
            return (await waiting.take(redis, "cpu", consumer, 1, cap=1, held={})).deliveries

    taken = run_async(take())
    assert len(taken) == 1
    return taken[0].run_id


def test_a_run_whose_delivery_died_before_starting_it_is_delivered_once_more(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agents()
    busy, owner = submit(fleet_client, HOLD)  # holds the agent's one slot
    wait_until(lambda: running(engine, busy), "the first run to start")
    waiting, _ = submit(fleet_client, "print('second try')")
    assert _claim_and_vanish(redis_server, "gone-before-starting") == waiting
    fleet_client.post(f"/api/runs/{busy}/cancel", headers=owner)
    run = wait_done(engine, waiting)  # taken over after the lease, and run
    assert (run.verdict, run.stdout, run.attempt) == ("ok", "second try\n", 2)


def test_a_run_that_two_deliveries_failed_to_start_ends_internal_error(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agents()
    busy, owner = submit(fleet_client, HOLD)
    wait_until(lambda: running(engine, busy), "the first run to start")
    waiting, _ = submit(fleet_client, "print('never')")
    _claim_and_vanish(redis_server, "first")
    _claim_and_vanish(redis_server, "second", reclaim=True)
    fleet_client.post(f"/api/runs/{busy}/cancel", headers=owner)
    run = wait_done(engine, waiting)
    assert (run.verdict, run.detail, run.stdout) == ("internal_error", NEVER_STARTED, "")
    assert run.started_at is None


def test_a_stopped_agent_is_found_out_by_its_lease(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    stopped = agents()
    run_id, _ = submit(fleet_client, HOLD)
    wait_until(lambda: running(engine, run_id), "the run to start")
    os.kill(stopped.pid, signal.SIGSTOP)
    try:
        run = wait_done(engine, run_id)
        assert (run.verdict, run.detail) == ("internal_error", MACHINE_STOPPED)
        refused = fleet_client.post("/api/runs", json={"code": "print(1)", "backend": "cpu"})
        assert refused.status_code == 503 and "cpu pool" in refused.json()["detail"]
    finally:
        os.kill(stopped.pid, signal.SIGCONT)
    # Woken up, it stops the run it held (the outcome stays) and serves again.
    client: redis.Redis = redis_server.client()
    wait_until(lambda: client.exists(keys.claim(run_id)) == 0, "the woken agent to let go")
    # It lets go of the run at its first look, which can come before its first heartbeat.
    wait_until(lambda: agent_ready(redis_server, stopped), "the woken agent's heartbeat")
    again, _ = submit(fleet_client, "print('back')")
    assert wait_done(engine, again).verdict == "ok"
    assert stored(engine, run_id).verdict == "internal_error"


def test_a_duplicate_delivery_is_refused_its_start_and_told_to_stop(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    """As after a wipe of Redis, when a rebuilt job reaches a second agent while the first
    still runs it: the database keeps the first start, and revokes the second delivery."""
    agents()
    run_id, owner = submit(fleet_client, HOLD)
    wait_until(lambda: running(engine, run_id), "the run to start")
    client: redis.Redis = redis_server.client()
    client.xadd(
        keys.RESULTS,
        {"kind": "started", "run": run_id, "attempt": 1, "token": "dup", "backend": "cpu",
         "device": "elsewhere"},
    )  # fmt: skip
    wait_until(lambda: client.exists(keys.revoked("dup")), "the duplicate to be revoked")
    run = stored(engine, run_id)
    assert (run.status, run.attempt) == ("running", 1) and run.device != "elsewhere"
    fleet_client.post(f"/api/runs/{run_id}/cancel", headers=owner)
    assert wait_done(engine, run_id).verdict == "killed"


def test_an_agent_whose_delivery_is_revoked_stops_the_run(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agents()
    run_id, _ = submit(fleet_client, HOLD)
    wait_until(lambda: running(engine, run_id), "the run to start")
    client: redis.Redis = redis_server.client()
    token = client.get(keys.claim(run_id))  # the delivery that holds it
    assert token
    client.set(keys.revoked(token), 1)
    run = wait_done(engine, run_id)
    assert (run.verdict, run.stdout) == ("killed", "holding\n")
