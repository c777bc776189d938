"""The fleet with the real sandbox worker: an agent process bridges Redis to the worker's
Unix socket, and the code really runs in the jail."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from tests.scaleout.conftest import Agents, stored, submit, wait_done, wait_until
from tests.scaleout.test_fleet_runs import sse
from tests.support.sandbox_worker import WorkerHandle, needs_isolation

pytestmark = needs_isolation


def test_a_run_goes_through_an_agent_to_the_real_worker_and_can_be_cancelled(
    fleet_client: TestClient, agents: Agents, engine: Engine, worker: WorkerHandle
) -> None:
    agents(executor="socket", socket_path=worker.socket_path, slots=2)
    run_id, owner = submit(fleet_client, "import os\nprint(6 * 7, os.getuid() != 0)")
    kinds = [kind for _, kind, _ in sse(fleet_client, run_id, owner)]
    assert kinds[-1] == "result" and "started" in kinds
    run = wait_done(engine, run_id, timeout=120)
    assert (run.verdict, run.stdout, run.backend) == ("ok", "42 True\n", "cpu")
    assert run.device and run.wall_ms and run.wall_ms > 0

    sleeper = "import time\nprint('sleeping', flush=True)\ntime.sleep(60)"
    run_id, owner = submit(fleet_client, sleeper)
    wait_until(lambda: stored(engine, run_id).status == "running", "the run to start", 120)
    assert fleet_client.post(f"/api/runs/{run_id}/cancel", headers=owner).status_code == 202
    run = wait_done(engine, run_id, timeout=30)
    assert run.verdict == "killed" and run.wall_ms is not None and run.wall_ms < 30_000
