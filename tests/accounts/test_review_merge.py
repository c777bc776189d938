"""A guest who signs in brings their reviews: exercise review events and question reviews
join the account's log, each card is the merged log replayed, and the export holds the
exercise reviews."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.exercises import review
from app.models import ExerciseCard, ExerciseReviewEvent, Learner, ReviewCard, ReviewEvent
from tests.exercises.test_review import submit
from tests.exercises.test_submissions import SLUG, browser, follow
from tests.support.bank import add_model_answers
from tests.support.forms import csrf_token, form, sign_in, sign_up

OTHER = "inverted-dropout"


def solve(client: TestClient, slug: str) -> None:
    url = f"/api/exercises/{slug}/submissions"
    accepted = client.post(url, json={"code": "passes", "mode": "submit"}).json()
    assert follow(client, f"{url}/{accepted['id']}/events")[-1][1]["verdict"] == "passed"  # type: ignore[index]


def another_browser(client: TestClient) -> TestClient:
    form(client, "/signout")
    client.cookies.clear()
    client.get("/")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return client


def test_a_guests_solves_merge_into_the_account_they_sign_in_to(
    client: TestClient, engine: Engine
) -> None:
    client = browser(client)
    sign_up(client, "vera")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    assert submit(client, "passes") == "passed"  # the account solves it on the laptop
    client = another_browser(client)
    assert submit(client, "fails") == "failed"  # and, as a guest on the phone, again
    assert submit(client, "passes") == "passed"
    solve(client, OTHER)
    with Session(engine) as session:
        assert len(session.exec(select(ExerciseCard)).all()) == 3  # two learners' cards

    assert sign_in(client, "vera") == 303
    client.headers["X-CSRF-Token"] = csrf_token(client)
    with Session(engine) as session:
        (learner,) = session.exec(select(Learner)).all()
        events = session.exec(
            select(ExerciseReviewEvent).order_by(
                col(ExerciseReviewEvent.reviewed_at), col(ExerciseReviewEvent.id)
            )
        ).all()
        assert {e.learner_id for e in events} == {learner.id}
        assert [(e.exercise_slug, e.attempts) for e in events] == [(SLUG, 1), (SLUG, 2), (OTHER, 1)]
        cards = {c.exercise_slug: c for c in session.exec(select(ExerciseCard)).all()}
        assert set(cards) == {SLUG, OTHER} and {c.learner_id for c in cards.values()} == {
            learner.id
        }
        merged = [(e.rating, e.reviewed_at) for e in events if e.exercise_slug == SLUG]
        due, card = review.schedule_solves(merged)  # both solves, replayed in order
        assert cards[SLUG].card == card and cards[SLUG].due.replace(tzinfo=None) == due.replace(
            tzinfo=None
        )

    exported = client.get("/api/me/export").json()["exercise_reviews"]
    assert [(r["exercise"], r["source"], r["attempts"]) for r in exported] == [
        (SLUG, "practice", 1),
        (SLUG, "practice", 2),
        (OTHER, "practice", 1),
    ]
    assert set(exported[0]) == {
        "exercise",
        "rating",
        "source",
        "attempts",
        "hints",
        "seconds",
        "reviewed_at",
    }


def test_a_guests_question_reviews_merge_into_an_existing_account(
    client: TestClient, engine: Engine
) -> None:
    add_model_answers(engine, "dropout")
    sign_up(client, "wren")
    client.get("/items/dropout")  # the account has a learner of its own: sign-in will merge
    client = another_browser(client)
    token = csrf_token(client, "/items/dropout")
    covered = {"position": "1", "covered": ["1", "2"], "csrf_token": token}
    assert client.post("/items/dropout/open", data=covered).status_code in (200, 303)
    assert sign_in(client, "wren") == 303
    with Session(engine) as session:
        (learner,) = session.exec(select(Learner)).all()
        events = session.exec(select(ReviewEvent)).all()
        assert len(events) == 1 and events[0].learner_id == learner.id
        (card,) = session.exec(select(ReviewCard)).all()
        assert card.learner_id == learner.id
    assert len(client.get("/api/me/export").json()["reviews"]) == 1
