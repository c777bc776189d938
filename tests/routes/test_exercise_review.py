"""Re-solving exercises through the app: a passing submit becomes a review event and a
card once per solve, a reveal of a solved exercise is Again, and a guest's cards follow
them into their account."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import ExerciseCard, ExerciseReviewEvent
from tests.routes.test_submissions import SLUG, URL, browser, follow


def submit(client: TestClient, code: str) -> str:
    accepted = client.post(URL, json={"code": code, "mode": "submit"}).json()
    result = follow(client, f"{URL}/{accepted['id']}/events")[-1][1]
    return str(result["verdict"])  # type: ignore[index]


def logged(engine: Engine) -> list[tuple[str, int, str, int]]:
    with Session(engine) as session:
        rows = session.exec(select(ExerciseReviewEvent).order_by(ExerciseReviewEvent.id))
        return [(e.exercise_slug, e.rating, e.source, e.attempts) for e in rows]


def test_a_passing_submit_records_one_event_per_solve(client: TestClient, engine: Engine) -> None:
    client = browser(client)
    assert submit(client, "fails") == "failed"
    assert logged(engine) == []
    assert submit(client, "passes") == "passed"
    assert logged(engine) == [(SLUG, 3, "practice", 2)]  # two submits on an easy one: Good
    assert submit(client, "passes again") == "passed"  # the same solve: nothing more
    assert logged(engine) == [(SLUG, 3, "practice", 2)]
    with Session(engine) as session:
        assert len(session.exec(select(ExerciseCard)).all()) == 1


def test_revealing_a_solved_exercise_is_again(client: TestClient, engine: Engine) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"
    assert client.post(f"/api/exercises/{SLUG}/solution").status_code == 200
    assert client.post(f"/api/exercises/{SLUG}/solution").status_code == 200
    assert [(r, s) for _, r, s, _ in logged(engine)] == [(4, "practice"), (1, "reveal")]
