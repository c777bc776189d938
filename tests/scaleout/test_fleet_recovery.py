"""Redis holds no run that the database does not: killed and restarted mid-load, or wiped
(FLUSHALL), it loses no accepted run; the web side rebuilds the job streams from `queued`
rows, and the agents set their running runs' claims again."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.models import Run
from tests.scaleout.conftest import LEASE, Agents, stored, submit, wait_done, wait_until
from tests.support.redis_server import RedisServer

HOLD = "print('holding')\n# fake: hold"


def _load(client: TestClient, engine: Engine, count: int) -> tuple[str, dict[str, str], list[str]]:
    """A held run in the agent's one slot, and `count` runs queued behind it."""
    held, owner = submit(client, HOLD)
    wait_until(lambda: stored(engine, held).status == "running", "the held run to start")
    queued = [submit(client, f"print('run {n}')")[0] for n in range(count)]
    return held, owner, queued


def test_redis_killed_and_restarted_mid_load_loses_no_accepted_run(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agents()
    held, owner, queued = _load(fleet_client, engine, 5)
    redis_server.kill()
    # Meanwhile a new run is refused (and stored so), and a cancel asks to try again.
    refused = fleet_client.post("/api/runs", json={"code": "print(1)", "backend": "cpu"})
    assert refused.status_code == 503 and refused.headers["Retry-After"]
    assert fleet_client.post(f"/api/runs/{held}/cancel", headers=owner).status_code == 503
    redis_server.start()
    refusals = 0
    while fleet_client.post(f"/api/runs/{held}/cancel", headers=owner).status_code != 202:
        refusals += 1  # the app's connections to Redis come back on their own
        assert refusals < 50
        time.sleep(0.1)
    assert wait_done(engine, held).verdict == "killed"
    for n, run_id in enumerate(queued):
        run = wait_done(engine, run_id)
        assert (run.verdict, run.stdout) == ("ok", f"run {n}\n")
    with Session(engine) as session:
        others = session.exec(select(Run.verdict).where(col(Run.id).notin_([held, *queued])))
        assert others.all() == ["rejected"]


def test_a_wiped_redis_is_rebuilt_from_the_database(
    fleet_client: TestClient, agents: Agents, engine: Engine, redis_server: RedisServer
) -> None:
    agents()
    held, owner, queued = _load(fleet_client, engine, 3)
    redis_server.client().flushall()
    # The held run's agent sets its claim again: the run is not taken for lost.
    time.sleep(3 * LEASE)
    assert stored(engine, held).status == "running"
    fleet_client.post(f"/api/runs/{held}/cancel", headers=owner)
    assert wait_done(engine, held).verdict == "killed"
    for n, run_id in enumerate(queued):
        run = wait_done(engine, run_id)
        assert (run.verdict, run.stdout, run.attempt) == ("ok", f"run {n}\n", 1)
