"""Runs through Redis to runner agents (real processes playing scripted runs): streaming,
resuming on another replica, auto's choice of pool, and each agent's /metrics."""

from __future__ import annotations

import signal
import urllib.request

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.main import create_app
from app.runqueue.fleet import keys
from app.settings import Settings
from tests.scaleout.conftest import Agents, submit, wait_done, wait_until
from tests.support.processes import free_port
from tests.support.redis_server import RedisServer
from tests.support.runs import Frame, sse_frames


def sse(
    client: TestClient, run_id: str, headers: dict[str, str], *, stop_after: str = "result"
) -> list[Frame]:
    """(id, event, data) of the run's stream, until the event `stop_after`."""
    frames = []
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200
        for frame in sse_frames(response.iter_lines()):
            frames.append(frame)
            if frame[1] == stop_after:
                break
    return frames


def test_a_run_goes_through_an_agent_and_streams_with_entry_ids(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    agents()
    run_id, owner = submit(fleet_client, "print('hello')")
    frames = sse(fleet_client, run_id, owner)
    kinds = [kind for _, kind, _ in frames]
    assert kinds == ["queued", "started", "stdout", "result"]
    assert frames[2][2] == {"data": "hello\n"}
    ids = [event_id for event_id, *_ in frames]
    assert all(i and i.split("-")[0].isdigit() for i in ids)  # Redis stream entry ids
    assert ids == sorted(ids, key=lambda i: tuple(int(p) for p in i.split("-")))
    run = wait_done(engine, run_id)
    assert (run.verdict, run.stdout, run.attempt, run.backend) == ("ok", "hello\n", 1, "cpu")
    assert run.started_at is not None


def test_a_browser_resumes_on_another_replica_without_losing_or_repeating_output(
    fleet_client: TestClient, fleet_settings: Settings, agents: Agents, engine: Engine
) -> None:
    agents()
    run_id, owner = submit(fleet_client, "print('first')\n# fake: hold")
    seen = sse(fleet_client, run_id, owner, stop_after="stdout")  # then the connection drops
    assert [kind for _, kind, _ in seen] == ["queued", "started", "stdout"]
    with TestClient(create_app(fleet_settings)) as other:
        # Resuming after `started`: the output it had not seen yet, then the end.
        after_started = {**owner, "Last-Event-ID": seen[1][0]}
        assert other.post(f"/api/runs/{run_id}/cancel", headers=owner).status_code == 202
        rest = sse(other, run_id, after_started)
        assert [kind for _, kind, _ in rest] == ["stdout", "result"]
        assert rest[0] == seen[2]  # the same entry, with the same id
        assert rest[1][2]["verdict"] == "killed"
        # Resuming after the last output: only the end.
        after_output = {**owner, "Last-Event-ID": seen[2][0]}
        assert [kind for _, kind, _ in sse(other, run_id, after_output)] == ["result"]
    assert wait_done(engine, run_id).verdict == "killed"


def test_auto_takes_the_gpu_pool_while_a_cuda_agent_lives(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    agents("cpu")
    first, _ = submit(fleet_client, "print(1)", backend="auto")
    assert wait_done(engine, first).backend == "cpu"
    agents("cuda")
    second, _ = submit(fleet_client, "print(1)", backend="auto")
    assert wait_done(engine, second).backend == "cuda"


def test_each_agent_serves_its_own_metrics(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    port = free_port()
    agents(metrics_port=port)
    run_id, _ = submit(fleet_client, "print('x')")
    wait_done(engine, run_id)

    def scrape() -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as page:
            return str(page.read().decode())

    wait_until(
        lambda: 'backprop_agent_runs_finished_total{verdict="ok"} 1.0' in scrape(), "a finish"
    )
    text = scrape()
    assert "backprop_agent_runs_taken_total 1.0" in text
    assert "backprop_agent_runs_running 0.0" in text
    age = next(
        line for line in text.splitlines() if line.startswith("backprop_agent_heartbeat_age")
    )
    assert 0 <= float(age.split()[-1]) < 5


def test_an_agent_told_to_stop_withdraws_its_heartbeat_at_once(
    agents: Agents, redis_server: RedisServer
) -> None:
    agent = agents()
    client = redis_server.client()
    assert list(client.scan_iter(keys.agents("cpu")))
    agent.send_signal(signal.SIGTERM)
    assert agent.wait(timeout=10) == 0
    assert list(client.scan_iter(keys.agents("cpu"))) == []  # not after its lease: now


def test_metrics_count_the_live_agents_of_each_pool(
    fleet_client: TestClient, agents: Agents
) -> None:
    def workers() -> dict[str, str]:
        text = fleet_client.get("/metrics").text
        lines = [line for line in text.splitlines() if line.startswith("backprop_pool_workers{")]
        return {line.split('"')[1]: line.split()[-1] for line in lines}

    assert workers() == {"cpu": "0.0", "cuda": "0.0"}
    agents("cpu")
    agents("cpu")
    cuda = agents("cuda")
    assert workers() == {"cpu": "2.0", "cuda": "1.0"}
    cuda.send_signal(signal.SIGTERM)  # it withdraws its heartbeat as it leaves
    cuda.wait(timeout=10)
    wait_until(lambda: workers()["cuda"] == "0.0", "the cuda agent to be gone from /metrics")
