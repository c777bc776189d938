"""POST /api/runs with an Idempotency-Key: a retry answers with the run the key started
(as it stands now) and starts nothing; a key reused for other code, or a malformed key,
is refused; concurrent requests with one key are settled by the unique index."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, func, select

from app.models import Run
from app.platform.limit_store import HitStore
from app.platform.ratelimit import RunLimiter
from app.runqueue.fake import FakeRunQueue
from app.runs import idempotency, runs
from app.runs.recorder import RunRecorder
from app.runs.runs import RunOrigin
from tests.support.aio import run_async
from tests.support.forms import csrf_token
from tests.support.runs import events_of

KEY = "0b7c5a52-4f1e-4d8e-9d0c-6a1f2e3d4c5b"


@pytest.fixture
def browser(client: TestClient) -> TestClient:
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return client


def start(client: TestClient, key: str | None, **body: Any) -> Any:
    """POST /api/runs, with the key when there is one."""
    headers = {"Idempotency-Key": key} if key is not None else {}
    return client.post("/api/runs", json={"code": "print('once')", **body}, headers=headers)


def run_count(engine: Engine) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(Run)).one()


def test_the_same_key_answers_with_the_same_run_as_it_stands_now(
    browser: TestClient, engine: Engine
) -> None:
    first = start(browser, KEY)
    assert first.status_code == 202 and first.json()["status"] == "queued"
    events_of(browser, first.json()["id"])  # the run ends
    again = start(browser, KEY)
    assert again.status_code == 202
    assert again.json()["id"] == first.json()["id"] and again.json()["status"] == "done"
    assert run_count(engine) == 1


def test_a_replay_does_not_count_against_the_run_limits(
    browser: TestClient, engine: Engine
) -> None:
    held = start(browser, KEY, code="# fake: hold")
    start(browser, None, code="# fake: hold")  # the visitor's two runs in flight
    assert start(browser, None).status_code == 429
    assert start(browser, KEY, code="# fake: hold").json()["id"] == held.json()["id"]
    assert run_count(engine) == 2


def test_the_same_key_with_other_code_is_refused(browser: TestClient, engine: Engine) -> None:
    assert start(browser, KEY).status_code == 202
    for changed in ({"code": "print('twice')"}, {"backend": "cpu"}):
        refused = start(browser, KEY, **changed)
        assert refused.status_code == 422
        assert "already used for a different request" in refused.json()["detail"]
    assert run_count(engine) == 1


@pytest.mark.parametrize("key", [b"k" * 65, b"two words", b"slash/y", "ключ".encode(), b""])
def test_a_malformed_key_is_refused_and_runs_nothing(
    browser: TestClient, engine: Engine, key: bytes
) -> None:
    refused = browser.post(
        "/api/runs", json={"code": "print(1)"}, headers={"Idempotency-Key": key}
    )  # header bytes as sent: UTF-8 arrives as Latin-1 text
    assert refused.status_code == 400
    assert "Idempotency-Key header must be 1 to 64" in refused.json()["detail"]
    assert run_count(engine) == 0


def test_keys_are_per_owner(browser: TestClient, engine: Engine) -> None:
    other = TestClient(browser.app)
    other.headers["X-CSRF-Token"] = csrf_token(other)  # another browser, its own cookie
    assert start(browser, KEY).json()["id"] != start(other, KEY).json()["id"]
    assert run_count(engine) == 2


def test_a_cookie_less_client_gets_the_same_token_again(client: TestClient) -> None:
    bare = TestClient(client.app)
    first, again = start(bare, KEY).json(), start(bare, KEY).json()
    assert (again["id"], again["token"]) == (first["id"], first["token"])
    read = bare.get(f"/api/runs/{first['id']}", headers={"X-Run-Token": again["token"]})
    assert read.status_code == 200


def test_the_openapi_description_documents_the_header(client: TestClient) -> None:
    operation = client.get("/openapi.json").json()["paths"]["/api/runs"]["post"]
    (header,) = [p for p in operation["parameters"] if p["name"] == "Idempotency-Key"]
    assert header["in"] == "header" and "same run" in header["description"]


def origin() -> RunOrigin:
    return RunOrigin(owner="visitor-1", client="203.0.113.7", learner_id=None)


async def submit_with(engine: Engine, key: str) -> runs.Submitted:
    queue = FakeRunQueue(RunRecorder(engine, on_end=()), linger_seconds=0)
    limiter = RunLimiter(HitStore(engine), concurrent=100, concurrent_per_client=100)
    try:
        return await runs.submit(
            engine,
            queue,
            limiter,
            code="print('once')",
            backend="cpu",
            origin=origin(),
            token_secret="s",
            idempotency_key=key,
        )
    finally:
        await queue.close()


def test_a_request_that_loses_the_race_answers_with_the_winners_run(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = run_async(submit_with(engine, KEY))
    # The loser looked before the winner had stored its run: only the unique index stops it.
    lookups: list[Run | None] = []
    looked_up = idempotency.earlier

    def late_lookup(engine: Engine, run: Run) -> Run | None:
        lookups.append(None if not lookups else looked_up(engine, run))
        return lookups[-1]

    monkeypatch.setattr(idempotency, "earlier", late_lookup)
    second = run_async(submit_with(engine, KEY))
    assert len(lookups) == 2  # before inserting, then after the index refused the insert
    assert (second.run.id, second.token) == (first.run.id, first.token)
    assert run_count(engine) == 1


def test_concurrent_requests_with_one_key_start_one_run(engine: Engine) -> None:
    async def together() -> list[runs.Submitted]:
        return await asyncio.gather(*(submit_with(engine, KEY) for _ in range(6)))

    answers = run_async(together())
    assert len({a.run.id for a in answers}) == 1
    assert run_count(engine) == 1
