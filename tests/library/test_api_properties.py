"""Property-based tests of the whole JSON API, generated from /openapi.json by Schemathesis:
for every operation, as a guest and as a signed-in user, no answer is a 5xx, every answer
matches its documented schema, and a refused request changes nothing. The number of
examples per operation is bounded (API_EXAMPLES) so CI stays within its time."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)
from sqlmodel import Session, func, select
from starlette.types import Receive, Scope, Send

from app.accounts import accounts
from app.main import create_app
from app.models import ItemProgress, Learner, Run, SolutionReveal, User
from app.settings import RunQueueKind, Settings
from tests.support import databases
from tests.support.forms import PASSWORD

EXAMPLES = int(os.environ.get("API_EXAMPLES", "25"))
CHECKS = (not_a_server_error, status_code_conformance, response_schema_conformance)


class DeferredApp:
    """The ASGI app the generated calls go to, known only once the fixture has built it (the
    schema is read at collection, from an app that touches no database)."""

    app: FastAPI | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.app is not None, "the `api` fixture sets the app first"
        await self.app(scope, receive, send)


TARGET = DeferredApp()
BLUEPRINT = create_app(Settings(database_url="sqlite://", secret_key="properties"))
schema = schemathesis.openapi.from_dict(BLUEPRINT.openapi())
schema.app = TARGET
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, imported_db_template: str) -> Iterator[FastAPI]:
    """One app for the module over its own database (rate limits raised: the examples come
    fast, from one client), with an account to sign in as. Schemathesis starts it."""
    folder = tmp_path_factory.mktemp("properties")
    with databases.copy_of(imported_db_template, folder) as database_url:
        yield from _app(folder, database_url)


def _app(folder: Path, database_url: str) -> Iterator[FastAPI]:
    app = create_app(
        Settings(
            database_url=database_url,
            data_dir=folder / "data",
            secret_key="properties",
            run_queue=RunQueueKind.fake,
            runs_per_minute=100_000,
            runs_per_minute_per_client=100_000,
            concurrent_runs=100_000,
            concurrent_runs_per_client=100_000,
            streams_per_visitor=100_000,
        )
    )
    limits = app.state.backprop.account_guards.limits
    for window in vars(limits).values():
        window.limit = 100_000
    with Session(app.state.backprop.engine) as session:
        user = accounts.create_user(session, username="prop", password=PASSWORD)
        app.state.token = accounts.issue_token(session, user=user, minutes=600)
        session.commit()
    TARGET.app = app
    yield app


@pytest.fixture(scope="module")
def bearer(api: FastAPI) -> dict[str, str]:
    return {"Authorization": f"Bearer {api.state.token}"}


def counts(api: FastAPI) -> tuple[int, ...]:
    """How many rows of each personal table there are: what a refused request must not move."""
    with Session(api.state.backprop.engine) as session:
        return tuple(
            session.exec(select(func.count()).select_from(model)).one()
            for model in (User, Learner, ItemProgress, Run, SolutionReveal)
        )


@schema.parametrize()
@SETTINGS
def test_guest_calls_never_fail_the_server_and_match_their_schema(
    case: schemathesis.Case, api: FastAPI
) -> None:
    before = counts(api)
    response = case.call_and_validate(checks=CHECKS)
    if response.status_code >= 400:
        assert counts(api) == before, f"{case.method} {case.path} refused but changed data"


@schema.parametrize()
@SETTINGS
def test_signed_in_calls_never_fail_the_server_and_match_their_schema(
    case: schemathesis.Case, api: FastAPI, bearer: dict[str, str]
) -> None:
    before = counts(api)
    response = case.call_and_validate(headers=bearer, checks=CHECKS)
    if response.status_code >= 400:
        assert counts(api) == before, f"{case.method} {case.path} refused but changed data"
