"""The API's schema is built once, off the event loop, beginning when /docs is served; nothing
is built before (an app's start pays nothing for a page few visit)."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.web.api_docs import SCHEMA_PATH, add_schema_route


def counting_app() -> tuple[FastAPI, list[int]]:
    app = FastAPI(openapi_url=None)
    builds: list[int] = []

    @app.get("/api/thing")
    def thing() -> dict[str, int]:
        return {"n": 1}

    built = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            builds.append(1)
        return built()

    app.openapi = openapi  # type: ignore[method-assign]
    return app, builds


def test_the_schema_is_built_once_when_started_and_served_after() -> None:
    app, builds = counting_app()
    schema = add_schema_route(app)
    assert builds == []  # making the app builds nothing
    schema.start()
    schema.start()  # a second visit of /docs starts no second build
    with TestClient(app) as client:
        served = client.get(SCHEMA_PATH)
        assert served.status_code == 200
        assert "/api/thing" in served.json()["paths"]
        assert client.get(SCHEMA_PATH).json() == served.json()
    assert builds == [1]


def test_the_schema_is_served_without_docs_visited_first() -> None:
    app, builds = counting_app()
    add_schema_route(app)
    with TestClient(app) as client:
        assert "/api/thing" in client.get(SCHEMA_PATH).json()["paths"]
    assert builds == [1]


@pytest.mark.parametrize("path", ["/docs", SCHEMA_PATH])
def test_the_app_serves_the_docs_and_its_schema(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 200
    spec = client.get(SCHEMA_PATH).json()
    assert spec["info"]["title"] == "Backprop" and "/api/runs" in spec["paths"]
