"""A request that cannot get a database connection soon is answered 503 with Retry-After,
changes nothing, and never holds up the event loop meanwhile."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Connection

from app import db
from app.main import create_app
from app.settings import Settings


@pytest.fixture
def busy_client(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """The app with a pool of two connections that gives up after 0.3 s."""
    monkeypatch.setattr(db, "POOL", {"pool_size": 2, "max_overflow": 0, "pool_timeout": 0.3})
    with TestClient(create_app(settings)) as client:
        yield client


def _hold_every_connection(client: TestClient) -> list[Connection]:
    engine = client.app.state.backprop.engine  # type: ignore[attr-defined]
    return [engine.connect() for _ in range(2)]


def test_no_connection_to_be_had_is_a_quick_503_with_retry_after(busy_client: TestClient) -> None:
    held = _hold_every_connection(busy_client)
    try:
        started = time.monotonic()
        page = busy_client.get("/items")
        api = busy_client.get("/api/items")
        waited = time.monotonic() - started
    finally:
        for connection in held:
            connection.close()
    assert page.status_code == 503 and api.status_code == 503
    assert page.headers["retry-after"] == "2"
    assert "busy" in page.text
    assert api.json()["detail"] == "The server is busy; nothing was changed. Try again in a moment."
    assert waited < 3  # two requests, each giving up after the pool's 0.3 s
    assert busy_client.get("/api/items").status_code == 200  # and served once one is free


def test_health_answers_while_the_pool_is_exhausted(busy_client: TestClient) -> None:
    """The health check says what is wrong instead of failing: the database is unreachable
    for now, so it is 503 'degraded', in a fraction of a second."""
    held = _hold_every_connection(busy_client)
    try:
        health = busy_client.get("/api/health")
    finally:
        for connection in held:
            connection.close()
    assert health.status_code == 503
    assert health.json()["database"] == "error: TimeoutError"
