"""Back-pressure: a run that the live agents of its pool would not reach soon is refused
with 503 and a Retry-After computed from the queue; so is one for a pool with no live agent,
in words that name the pool. A refused run is stored `rejected`, and never runs."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.main import create_app
from app.models import Run
from app.settings import Settings
from tests.scaleout.conftest import Agents, stored, submit, wait_until


@pytest.fixture
def impatient_client(fleet_settings: Settings) -> Iterator[TestClient]:
    """The app with a wait of at most 1 s: one agent slot drains one waiting run that soon
    (a run is taken to last 5 s until the pool has finished some)."""
    settings = fleet_settings.model_copy(update={"fleet_max_wait_seconds": 1.0})
    with TestClient(create_app(settings)) as client:
        yield client


def test_a_long_queue_answers_503_with_retry_after(
    impatient_client: TestClient, agents: Agents, engine: Engine
) -> None:
    agents(slots=1)
    held, owner = submit(impatient_client, "# fake: hold")
    wait_until(lambda: stored(engine, held).status == "running", "the first run to start")
    waiting, _ = submit(impatient_client, "print('next')")  # the one run the slot drains soon
    refused = impatient_client.post("/api/runs", json={"code": "print(1)", "backend": "cpu"})
    assert refused.status_code == 503
    assert refused.headers["Retry-After"] == "5"  # one run too many, 5 s a run, one slot
    assert "cpu code runners have 1 runs waiting" in refused.json()["detail"]
    with Session(engine) as session:
        verdicts = session.exec(select(Run.verdict).where(Run.id.notin_([held, waiting]))).all()
    assert verdicts == ["rejected"]
    impatient_client.post(f"/api/runs/{held}/cancel", headers=owner)
    wait_until(lambda: stored(engine, waiting).status == "done", "the waiting run")
    # Drained: accepted again.
    assert submit(impatient_client, "print('later')")[0]


def test_a_pool_with_no_live_agent_answers_503_naming_it(
    fleet_client: TestClient, agents: Agents, engine: Engine
) -> None:
    refused = fleet_client.post("/api/runs", json={"code": "print(1)", "backend": "cpu"})
    assert refused.status_code == 503 and "cpu pool" in refused.json()["detail"]
    assert int(refused.headers["Retry-After"]) > 0
    agents("cpu")
    refused = fleet_client.post("/api/runs", json={"code": "print(1)", "backend": "cuda"})
    assert refused.status_code == 503 and "cuda pool" in refused.json()["detail"]
    time.sleep(0.3)  # a refused run is never delivered, not even after a rebuild
    with Session(engine) as session:
        assert set(session.exec(select(Run.verdict)).all()) == {"rejected"}
