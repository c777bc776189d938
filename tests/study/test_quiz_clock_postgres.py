"""On PostgreSQL, quiz deadlines are kept by the database server's clock: a web replica whose
own clock is wrong neither accepts an answer after the deadline nor cuts a quiz short."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import Engine

from app import migrate
from app.importer import import_content
from app.main import create_app
from app.settings import RunQueueKind, Settings
from tests.support.forms import csrf_token
from tests.support.paths import CONTENT_DIR

pytest_plugins = ["tests.support.postgres"]

SKEW = timedelta(hours=1)


class Replicas:
    """Two web replicas over one database, sharing a guest's cookies."""

    def __init__(self, first: TestClient, second: TestClient, engine: Engine) -> None:
        self.first, self.second, self.engine = first, second, engine

    def database_now(self) -> datetime:
        with self.engine.connect() as conn:
            moment: datetime = conn.execute(text("SELECT clock_timestamp()")).scalar_one()
        return moment

    def start(self, client: TestClient, seconds: int = 60) -> dict[str, Any]:
        body = {"deck": "deep-learning", "count": 5, "seconds": seconds, "mode": "timed"}
        response = client.post("/api/quizzes", json=body)
        assert response.status_code == 201, response.text
        return response.json()  # type: ignore[no-any-return]

    def answer(self, client: TestClient, quiz: dict[str, Any]) -> int:
        question = quiz["questions"][0]["id"]
        body = {"question_id": question, "choice_id": "A"}
        return client.post(f"/api/quizzes/{quiz['id']}/answers", json=body).status_code


@pytest.fixture
def replicas(postgres_url: str, postgres_engine: Engine, tmp_path: Path) -> Iterator[Replicas]:
    migrate.upgrade(postgres_engine)
    import_content(postgres_engine, CONTENT_DIR)

    def replica(name: str) -> TestClient:
        settings = Settings(
            database_url=postgres_url,
            data_dir=tmp_path / name,
            secret_key="one secret for every replica",
            run_queue=RunQueueKind.fake,
            import_on_start=False,
        )
        return TestClient(create_app(settings))

    with replica("first") as first, replica("second") as second:
        first.headers["X-CSRF-Token"] = csrf_token(first)
        second.cookies = first.cookies  # the same guest, served by either replica
        second.headers["X-CSRF-Token"] = first.headers["X-CSRF-Token"]
        yield Replicas(first, second, postgres_engine)


@contextmanager
def python_clock_off_by(skew: timedelta) -> Iterator[None]:
    """This process's clock, as the app reads it, runs `skew` ahead (behind when negative)."""

    class Skewed(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> Skewed:
            real = datetime.now(tz) + skew
            return cls.fromtimestamp(real.timestamp(), tz)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("app.db.datetime", Skewed)
        patch.setattr("app.models.base.datetime", Skewed)
        assert abs(Skewed.now(UTC) - datetime.now(UTC) - skew) < timedelta(seconds=1)
        yield


def test_a_replica_whose_clock_is_behind_refuses_an_answer_after_the_deadline(
    replicas: Replicas,
) -> None:
    quiz = replicas.start(replicas.first)
    with replicas.engine.begin() as conn:  # a minute passes, by the database's clock
        conn.execute(
            text("UPDATE quizattempt SET deadline = clock_timestamp() - interval '1 second'")
        )
    with python_clock_off_by(-SKEW):  # by its own clock, 59 minutes are left
        assert replicas.answer(replicas.second, quiz) == 409


def test_a_replica_whose_clock_is_ahead_starts_and_takes_a_quiz_by_the_database_clock(
    replicas: Replicas,
) -> None:
    with python_clock_off_by(SKEW):  # by its own clock, any 60 s quiz ended an hour ago
        before = replicas.database_now()
        quiz = replicas.start(replicas.second)
        after = replicas.database_now()
        assert replicas.answer(replicas.second, quiz) == 200
    deadline = datetime.fromisoformat(quiz["deadline"])
    assert before + timedelta(seconds=60) <= deadline <= after + timedelta(seconds=60)
    assert replicas.answer(replicas.first, {**quiz, "questions": quiz["questions"][1:]}) == 200
