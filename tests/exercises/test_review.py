"""Re-solving exercises through the app: a passing submit becomes a review event and a
card once per solve, a reveal of a solved exercise is Again, and a guest's cards follow
them into their account."""

from __future__ import annotations

import re
from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import LearnerScope
from app.models import ExerciseCard, ExerciseReviewEvent, Question, utcnow
from app.study import review
from tests.exercises.test_submissions import SLUG, URL, browser, follow
from tests.support.bank import add_bank
from tests.support.forms import csrf_token, sign_up
from tests.support.paths import EXERCISE_COUNT


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
    give_up = {"give_up": True}  # nothing failed: only giving up opens it
    assert client.post(f"/api/exercises/{SLUG}/solution", json=give_up).status_code == 200
    assert client.post(f"/api/exercises/{SLUG}/solution").status_code == 200  # revealed
    assert [(r, s) for _, r, s, _ in logged(engine)] == [(4, "practice"), (1, "reveal")]


def questions_answered(engine: Engine, count: int) -> None:
    """`count` questions reviewed now by the learner who solved the exercise."""
    add_bank(engine)
    with Session(engine) as session:
        learner_id = session.exec(select(ExerciseCard.learner_id)).one()
        scope = LearnerScope(session, learner_id)
        for question_id in session.exec(select(Question.id).limit(count)).all():
            assert question_id is not None
            review.record(scope, question_id, rating=3, source="quiz", at=utcnow())
        session.commit()


def later(client: TestClient, days: int) -> None:
    moment = utcnow() + timedelta(days=days)
    client.app.state.backprop.clock = lambda: moment  # type: ignore[attr-defined]


def test_due_exercises_come_between_due_questions(client: TestClient, engine: Engine) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"
    questions_answered(engine, 7)
    page = client.get("/review").text
    assert "Due now: 7 questions" not in page  # nothing is due yet
    later(client, 30)
    page = client.get("/review").text
    assert "Due now: 7 questions and 1 exercise" in page
    order = re.findall(r'class="review-(question|exercise)"', page)
    assert order == ["question"] * 3 + ["exercise"] + ["question"] * 4
    assert f'href="/exercises/{SLUG}?review=1"' in page

    due = client.get("/api/me/review").json()
    assert (due["due_questions"], due["due_exercises"]) == (7, 1)
    kinds = [e["kind"] for e in due["queue"]]
    assert kinds == ["question"] * 3 + ["exercise"] + ["question"] * 4
    exercise = due["queue"][3]
    assert exercise["exercise"] == SLUG and exercise["url"] == f"/exercises/{SLUG}?review=1"
    assert exercise["difficulty"] == "easy" and exercise["due"]


def test_only_exercises_due_show_with_their_own_count(client: TestClient) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"
    later(client, 30)
    page = client.get("/review").text
    assert "Due now: 1 exercise</h2>" in page and "Review 0" not in page
    assert "Nothing is due" not in page


def test_nothing_due_shows_the_empty_state(client: TestClient) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"  # due in days, not now
    page = client.get("/review").text
    assert "Nothing is due for review." in page and "review-exercise" not in page
    assert client.get("/api/me/review").json() == {
        "due_questions": 0,
        "due_exercises": 0,
        "queue": [],
    }


def test_the_exercise_page_says_when_it_is_next_due(client: TestClient) -> None:
    client = browser(client)
    assert "Next review in" not in client.get(f"/exercises/{SLUG}").text  # not solved yet
    assert submit(client, "passes") == "passed"
    page = client.get(f"/exercises/{SLUG}").text
    days = int(re.search(r"Next review in (\d+) days?", page).group(1))  # type: ignore[union-attr]
    assert days >= 2
    later(client, 30)
    page = client.get(f"/exercises/{SLUG}").text
    assert "due for re-solving now" in page and f"/exercises/{SLUG}?review=1" in page


def test_review_mode_opens_from_the_starter_not_the_saved_draft(client: TestClient) -> None:
    client = browser(client)
    sign_up(client, "reviewer")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    draft = "def softmax(x, dim):  # my saved attempt"
    assert client.post(f"/exercises/{SLUG}/draft", data={"code": draft}).status_code == 204
    assert "my saved attempt" in client.get(f"/exercises/{SLUG}").text
    page = client.get(f"/exercises/{SLUG}", params={"review": "1"}).text
    assert "my saved attempt" not in page and 'data-review="1"' in page
    assert "solve it again from the starter" in page
    refused = client.get(f"/exercises/{SLUG}", params={"review": "maybe"})
    assert refused.status_code == 422


def test_passing_a_due_review_records_a_review(client: TestClient, engine: Engine) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"
    with Session(engine) as session:  # the card fell due an hour ago
        card = session.exec(select(ExerciseCard)).one()
        card.due = utcnow() - timedelta(hours=1)
        session.add(card)
        session.commit()
    assert submit(client, "passes in review") == "passed"
    assert [s for _, _, s, _ in logged(engine)] == ["practice", "review"]


def test_readiness_counts_each_solved_exercise(client: TestClient) -> None:
    client = browser(client)
    day = (utcnow() + timedelta(days=60)).date().isoformat()
    before = client.get("/api/me/readiness", params={"interview": day}).json()
    assert before["coding"]["solved"] == 0 and before["coding"]["exercises"] == []
    assert before["coding"]["total"] == EXERCISE_COUNT
    assert (
        f"Coding: no exercise solved yet, of {EXERCISE_COUNT}"
        in client.get(f"/dashboard?interview={day}").text
    )

    assert submit(client, "passes") == "passed"
    soon = (utcnow() + timedelta(days=1)).date().isoformat()
    near = client.get("/api/me/readiness", params={"interview": soon}).json()["coding"]
    far = client.get("/api/me/readiness", params={"interview": day}).json()
    coding = far["coding"]
    assert coding["solved"] == 1 and coding["exercises"][0]["exercise"] == SLUG
    one = coding["exercises"][0]
    assert one["recall_now"] > 0.95  # just solved
    assert 0 < one["expected_recall"] < near["exercises"][0]["expected_recall"] <= 1
    assert coding["expected_recall"] == one["expected_recall"]
    assert "expected_recall" in far and isinstance(far["topics"], list)

    page = client.get(f"/dashboard?interview={day}").text
    percent = f"{100 * one['expected_recall']:.0f}%"
    assert f"Coding: <strong>{percent}</strong>" in page
    assert f'href="/exercises/{SLUG}"' in page


def test_readiness_refuses_a_past_or_missing_date(client: TestClient) -> None:
    past = client.get("/api/me/readiness", params={"interview": "2000-01-01"})
    assert past.status_code == 422 and "in the past" in past.json()["detail"]
    assert client.get("/api/me/readiness").status_code == 422
    assert client.get("/api/me/readiness", params={"interview": "soon"}).status_code == 422


def test_the_dashboard_counts_due_exercises(client: TestClient) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"
    assert "1 due exercise" not in client.get("/dashboard").text
    later(client, 30)
    assert "Review 1 due exercise" in client.get("/dashboard").text


def test_the_navigation_counts_due_exercises_with_due_questions(
    client: TestClient, engine: Engine
) -> None:
    client = browser(client)
    assert submit(client, "passes") == "passed"
    questions_answered(engine, 2)
    assert "due</span>" not in client.get("/exercises").text
    later(client, 30)
    assert "3 due</span>" in client.get("/exercises").text
    assert "3 due for review" in client.get("/").text
