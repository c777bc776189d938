"""Cancel through Redis in each phase: before any agent took the run (it never starts),
while it runs (the agent tells the worker to stop), and after a wipe of Redis (the
database has the final word: `killed`)."""

from __future__ import annotations

import redis
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.runqueue.fleet import keys
from tests.scaleout.conftest import Agents, stored, submit, wait_done, wait_until
from tests.support.redis_server import RedisServer

HOLD = "print('holding')\n# fake: hold"


def cancel(client: TestClient, run_id: str, owner: dict[str, str]) -> None:
    assert client.post(f"/api/runs/{run_id}/cancel", headers=owner).status_code == 202


def test_a_run_cancelled_before_an_agent_took_it_never_starts(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agents()
    busy, busy_owner = submit(fleet_client, HOLD)  # the agent's one slot
    wait_until(lambda: stored(engine, busy).status == "running", "the first run to start")
    waiting, owner = submit(fleet_client, "print('must not run')")
    cancel(fleet_client, waiting, owner)
    run = wait_done(engine, waiting, timeout=2)  # at once: no agent had it
    assert (run.verdict, run.started_at, run.stdout) == ("killed", None, "")
    cancel(fleet_client, busy, busy_owner)  # the agent now takes the job, and drops it
    assert wait_done(engine, busy).verdict == "killed"
    client: redis.Redis = redis_server.client()
    wait_until(lambda: client.xlen(keys.jobs("cpu")) == 0, "the job to be dropped")
    assert client.get(keys.began(waiting)) is None  # never handed to a worker
    assert stored(engine, waiting).started_at is None


def test_a_running_run_is_stopped_by_its_agent(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    agents()
    run_id, owner = submit(fleet_client, HOLD)
    wait_until(lambda: stored(engine, run_id).status == "running", "the run to start")
    cancel(fleet_client, run_id, owner)
    run = wait_done(engine, run_id)
    assert (run.verdict, run.detail, run.stdout) == ("killed", "Cancelled.", "holding\n")


def test_a_cancel_after_a_wipe_of_redis_ends_the_run_killed(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agent = agents()
    run_id, owner = submit(fleet_client, HOLD)
    wait_until(lambda: stored(engine, run_id).status == "running", "the run to start")
    redis_server.client().flushall()
    cancel(fleet_client, run_id, owner)
    assert wait_done(engine, run_id).verdict == "killed"
    # The agent, which still ran it, stopped it and is free for the next run.
    client: redis.Redis = redis_server.client()
    wait_until(lambda: any(client.scan_iter(keys.agents("cpu"))), "the agent's next heartbeat")
    again, _ = submit(fleet_client, "print('after the wipe')")
    assert wait_done(engine, again).verdict == "ok"
    assert agent.poll() is None
