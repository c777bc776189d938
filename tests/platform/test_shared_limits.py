"""Rate limits and run caps are counted in the database: two app instances over one database
(two web replicas) enforce one limit together, with the same messages and Retry-After as
one instance alone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from app.db import database_now
from app.domain import RateLimited
from app.main import create_app
from app.models import LimitHit
from app.platform import limit_store
from app.platform.limit_store import HitStore, digest
from app.platform.ratelimit import SlidingWindow
from app.settings import Settings
from tests.support.forms import csrf_token
from tests.support.runs import events_of


@pytest.fixture
def replicas(settings: Settings) -> Iterator[tuple[TestClient, TestClient]]:
    """Two instances of the app over one database, and one browser's cookies on both."""
    tight = settings.model_copy(update={"runs_per_minute": 3, "concurrent_runs": 2})
    second = tight.model_copy(update={"data_dir": settings.data_dir / "second"})
    with TestClient(create_app(tight)) as a, TestClient(create_app(second)) as b:
        a.headers["X-CSRF-Token"] = csrf_token(a)
        b.cookies, b.headers["X-CSRF-Token"] = a.cookies, a.headers["X-CSRF-Token"]
        yield a, b


def test_runs_a_minute_are_counted_across_replicas(
    replicas: tuple[TestClient, TestClient],
) -> None:
    a, b = replicas
    for client in (a, b, a):
        started = client.post("/api/runs", json={"code": "print(1)"})
        assert started.status_code == 202
        events_of(client, started.json()["id"])  # ended: only the minute's count is left
    refused = b.post("/api/runs", json={"code": "print(1)"})
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("That is 3 runs in a minute, the limit")
    assert 50 <= int(refused.headers["Retry-After"]) <= 60  # the first run, seconds ago


def test_runs_in_flight_are_counted_across_replicas(
    replicas: tuple[TestClient, TestClient],
) -> None:
    a, b = replicas
    held = [c.post("/api/runs", json={"code": "# fake: hold"}).json()["id"] for c in (a, b)]
    third = a.post("/api/runs", json={"code": "print(3)"})
    assert third.status_code == 429 and "2 runs going" in third.json()["detail"]
    assert third.headers["Retry-After"] == "2"
    b.post(f"/api/runs/{held[1]}/cancel")  # the replica carrying it ends it
    for _ in range(100):
        if (answer := a.post("/api/runs", json={"code": "print(4)"})).status_code == 202:
            break
        time.sleep(0.05)
    assert answer.status_code == 202
    a.post(f"/api/runs/{held[0]}/cancel")


def test_sign_in_attempts_are_counted_across_replicas(
    replicas: tuple[TestClient, TestClient],
) -> None:
    a, b = replicas
    for client in (a, b):
        client.app.state.backprop.account_guards.limits.sign_in_per_client.limit = 3  # type: ignore[attr-defined]
    for client in (a, b, a):
        tried = client.post("/api/token", data={"username": "nobody", "password": "x" * 9})
        assert tried.status_code == 401
    refused = b.post("/api/token", data={"username": "nobody", "password": "x" * 9})
    assert refused.status_code == 429
    assert refused.json()["detail"].startswith("Too many sign-in attempts from here")
    assert 590 <= int(refused.headers["Retry-After"]) <= 600  # the first try, seconds ago


def test_retry_after_counts_from_the_oldest_hit_in_the_window(engine: Engine) -> None:
    store = HitStore(engine)
    window = SlidingWindow("test", 2, 60, "Wait {wait}.", store)
    key = digest("test", "203.0.113.9")
    with engine.begin() as conn:
        now = database_now(conn)
        for seconds_ago in (50, 20, 70):  # the last has left the window
            store.add(conn, [(key, timedelta(seconds=60))], now - timedelta(seconds=seconds_ago))
    with pytest.raises(RateLimited) as refused:
        window.hit("203.0.113.9")
    assert refused.value.retry_after_seconds == 10  # the hit 50 s ago leaves in 10 s
    assert refused.value.message == "Wait 10 s."
    window.hit("198.51.100.1")  # another key has its own allowance


def test_hits_that_left_their_window_are_swept(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = HitStore(engine)
    window = SlidingWindow("test", 5, 60, "Wait {wait}.", store)
    with engine.begin() as conn:
        old = database_now(conn) - timedelta(minutes=5)
        for n in range(3):
            store.add(conn, [(digest("test", f"gone-{n}"), timedelta(seconds=60))], old)
    monkeypatch.setattr(limit_store, "SWEEP_SECONDS", 0.0)
    window.hit("fresh")
    with engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(LimitHit)).scalar_one() == 1


def test_concurrent_hits_never_overfill_a_window(engine: Engine) -> None:
    """Twenty attempts at once, each in its own transaction and thread (as from several
    replicas): the per-key lock lets exactly the limit through."""
    window = SlidingWindow("test", 5, 60, "Wait {wait}.", HitStore(engine))

    def attempt() -> BaseException | None:
        try:
            window.hit("203.0.113.10")
        except RateLimited as exc:
            return exc
        return None

    with ThreadPoolExecutor(max_workers=20) as pool:
        outcomes = list(pool.map(lambda _: attempt(), range(20)))
    assert outcomes.count(None) == 5
    assert all(isinstance(o, RateLimited) for o in outcomes if o is not None)


def test_open_event_streams_are_counted_across_replicas(settings: Settings) -> None:
    """A visitor's open streams count on every replica: with one allowed, a second on the
    other replica is refused, and it is allowed once the first one closes."""
    one = settings.model_copy(update={"streams_per_visitor": 1})
    other = one.model_copy(update={"data_dir": settings.data_dir / "second"})
    with TestClient(create_app(one)) as a, TestClient(create_app(other)) as b:
        a.headers["X-CSRF-Token"] = csrf_token(a)
        b.cookies, b.headers["X-CSRF-Token"] = a.cookies, a.headers["X-CSRF-Token"]
        run_id = a.post("/api/runs", json={"code": "# fake: hold"}).json()["id"]
        with a.stream("GET", f"/api/runs/{run_id}/events") as first:
            assert first.status_code == 200
            refused = b.get(f"/api/runs/{run_id}/events")
            assert refused.status_code == 429 and refused.headers["Retry-After"] == "5"
            assert "1 run streams open already" in refused.json()["detail"]
            a.post(f"/api/runs/{run_id}/cancel")
            for line in first.iter_lines():
                if line.startswith("event: result"):
                    break
        # The first stream closed: its slot is free on the other replica too.
        assert events_of(b, run_id)[-1][1]["verdict"] == "killed"
