"""Shared fixtures. Each test gets its own database, copied from one migrated and imported
template so that the expensive part runs once per session: SQLite files, or PostgreSQL
databases when DATABASE_URL names a PostgreSQL server (tests/support/databases.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app import migrate
from app.db import make_engine
from app.main import create_app
from app.settings import RunQueueKind, Settings
from tests.support import databases
from tests.support.paths import CONTENT_DIR
from tests.support.sandbox_worker import WorkerHandle, running_worker, skip_unless_isolated

# `redis_server`: a real redis-server per test, for the fleet's tests.
pytest_plugins = ["tests.support.redis_server"]


# Suites that never touch the app's database: the sandbox's own tests, the code checks and
# the exercises' honesty matrix. They are marked `no_database`, so that CI's second pass, on
# PostgreSQL, skips them (`.ci/run`): they ran in the first and would show nothing new.
NO_DATABASE = (
    "tests/grading/",
    "tests/importer/test_bank_complete.py",
    "tests/importer/test_corrections.py",
    "tests/importer/test_cues.py",
    "tests/importer/test_fidelity.py",
    "tests/importer/test_question_bank.py",
    "tests/importer/test_similar.py",
    "tests/interview/test_review_queue.py",
    "tests/test_architecture.py",
    "tests/test_docs_links.py",
    "tests/exercises/test_code_shape.py",
    "tests/exercises/test_side_by_side.py",
    "tests/exercises/test_solve_rating.py",
    "tests/sandbox/test_cgroups.py",
    "tests/sandbox/test_compile_cache.py",
    "tests/sandbox/test_content_runs.py",
    "tests/sandbox/test_cuda.py",
    "tests/sandbox/test_gpu_absent.py",
    "tests/sandbox/test_gpu_setup.py",
    "tests/sandbox/test_grader_hostile.py",
    "tests/sandbox/test_grading_core.py",
    "tests/sandbox/test_grading_jail.py",
    "tests/sandbox/test_hostile_cases.py",
    "tests/sandbox/test_lab_harness.py",
    "tests/sandbox/test_lifecycle.py",
    "tests/sandbox/test_output.py",
    "tests/sandbox/test_phases.py",
    "tests/sandbox/test_pool.py",
    "tests/sandbox/test_protocol.py",
    "tests/sandbox/test_question_checks.py",
    "tests/sandbox/test_resources.py",
    "tests/sandbox/test_unix_sockets.py",
    "tests/sandbox/test_verdict.py",
    "tests/sandbox/test_worker.py",
    "tests/test_serve_state.py",
)

# Browser suites whose subject is the page itself (its layout, accessibility, keyboard and
# editor), which reads the same rows whichever engine holds them: marked `one_engine`, they
# run on SQLite only. The browser paths that write through timed and multi-step flows (sign-up
# and recovery, quizzes on the server's clock, coding rounds, the whole practice path) run on
# both engines, beside the route, service and fleet suites that prove the data layer there.
ONE_ENGINE = (
    "tests/browser/test_accessibility.py",
    "tests/browser/test_admin_exercises.py",
    "tests/browser/test_exercise_case.py",
    "tests/browser/test_exercise_review.py",
    "tests/browser/test_exercise_solution.py",
    "tests/browser/test_exercises.py",
    "tests/browser/test_library.py",
    "tests/browser/test_navigation.py",
    "tests/browser/test_runner.py",
    "tests/browser/test_workspace.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """What the tests compile in their own process (the lab harness's tests, the grading
    matrices) is cached in a folder of the session's, removed at its end: by default inductor
    keeps it in /tmp/torchinductor_<user>, which outlives every run (gigabytes after a few)."""
    if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
        folder = tempfile.mkdtemp(prefix="backprop-tests-inductor-")
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = config.rootpath
    for item in items:
        where = item.path.relative_to(root).as_posix()
        if where.startswith(NO_DATABASE):
            item.add_marker(pytest.mark.no_database)
        if where.startswith(ONE_ENGINE):
            item.add_marker(pytest.mark.one_engine)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `isolation` (needs_isolation) run only where this host can isolate code;
    asked here, when one is about to run, not when the tests are imported."""
    if item.get_closest_marker("isolation") is not None:
        skip_unless_isolated()


@pytest.fixture(scope="session")
def worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WorkerHandle]:
    """One real sandbox worker for the whole session."""
    with running_worker(tmp_path_factory.mktemp("sandbox")) as handle:
        yield handle


@pytest.fixture(scope="session")
def imported_db_template(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The URL of a database with the schema and all content, built once."""
    return databases.build_template(tmp_path_factory.mktemp("template"))


@pytest.fixture
def database_url(tmp_path: Path, imported_db_template: str) -> Iterator[str]:
    """A private copy of the imported database."""
    with databases.copy_of(imported_db_template, tmp_path) as url:
        yield url


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """An app over its own database and data folder, with scripted runs (tests/support and
    app/runqueue/fake.py); tests of the real sandbox ask for the `worker` fixture."""
    return Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        secret_key="test-secret",
        run_queue=RunQueueKind.fake,
    )


@pytest.fixture
def engine(settings: Settings) -> Iterator[Engine]:
    engine = make_engine(settings.database_url)
    yield engine
    engine.dispose()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    """The app over a fresh copy of the imported database, start-up included."""
    with TestClient(create_app(settings)) as client:
        yield client


@pytest.fixture
def empty_engine(tmp_path: Path) -> Iterator[Engine]:
    """A migrated database with no content, for importer tests."""
    with databases.empty(tmp_path) as url:
        engine = make_engine(url)
        migrate.upgrade(engine)
        yield engine
        engine.dispose()


@pytest.fixture
def content_copy(tmp_path: Path) -> Path:
    """A writable copy of the content folder, to break or change files in."""
    target = tmp_path / "content"
    shutil.copytree(CONTENT_DIR, target)
    return target
