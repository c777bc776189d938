"""Quizzes through the pages and the API: the server's clock, lazy closing, key secrecy,
grading, results, history, guests carried into accounts, other people's quizzes."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from tests.support.bank import KEY_TEXT, SECRET, add_bank
from tests.support.forms import csrf_token, form, sign_up

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


class Clock:
    """The app's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock(client: TestClient, engine: Engine) -> Clock:
    add_bank(engine, deck="torch-compile")  # a deck whose content has no questions
    fake = Clock()
    client.app.state.backprop.clock = fake  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return fake


def start(client: TestClient, **body: Any) -> dict[str, Any]:
    payload = {"deck": "torch-compile", "count": 5, "seconds": 300, "mode": "timed", **body}
    response = client.post("/api/quizzes", json=payload)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def key_letter(question: dict[str, Any]) -> str:
    return next(c["id"] for c in question["choices"] if c["text"].startswith(KEY_TEXT))


def wrong_letter(question: dict[str, Any]) -> str:
    return next(c["id"] for c in question["choices"] if not c["text"].startswith(KEY_TEXT))


def test_a_timed_quiz_is_graded_with_every_option_explained(
    client: TestClient, clock: Clock
) -> None:
    quiz = start(client)
    assert quiz["deadline"] and len(quiz["questions"]) == 5 and quiz["closed"] is False
    first, second = quiz["questions"][:2]
    for question, letter in ((first, key_letter(first)), (second, wrong_letter(second))):
        clock.now += timedelta(seconds=20)
        answered = client.post(
            f"/api/quizzes/{quiz['id']}/answers",
            json={"question_id": question["id"], "choice_id": letter},
        )
        assert answered.status_code == 200
    result = client.post(f"/api/quizzes/{quiz['id']}/submit").json()
    assert result["closed"] is True and result["score"] == 1 and result["total"] == 5
    graded = result["questions"]
    assert graded[0]["correct"] is True and graded[1]["correct"] is False
    assert graded[0]["seconds"] is not None
    assert all(c["why"] and c["why"].startswith(SECRET) for q in graded for c in q["choices"])
    assert all(sum(c["correct"] for c in q["choices"]) == 1 for q in graded)


def test_keys_never_reach_the_browser_before_the_answer_is_locked(
    client: TestClient, clock: Clock
) -> None:
    quiz = start(client)
    first = quiz["questions"][0]
    bodies = [str(quiz)]
    bodies.append(client.get(f"/api/quizzes/{quiz['id']}").text)
    page = client.get(f"/quizzes/{quiz['id']}")
    bodies.append(page.text)
    fragment = client.get(f"/quizzes/{quiz['id']}", headers={"HX-Request": "true"})
    bodies.append(fragment.text)
    answered = client.post(
        f"/quizzes/{quiz['id']}/answers",
        data={"position": first["id"], "choice": wrong_letter(first)},
        headers={"HX-Request": "true"},
    )
    bodies.append(answered.text)
    api_answer = client.post(
        f"/api/quizzes/{quiz['id']}/answers",
        json={"question_id": quiz["questions"][1]["id"], "choice_id": "A"},
    )
    bodies.append(api_answer.text)
    for body in bodies:
        assert SECRET not in body
        assert "'correct': True" not in body and '"correct":true' not in body
        assert "is-key" not in body and "badge-key" not in body
    # The same attempt shows its choices in one order; another attempt may differ, and the
    # letters say nothing of the key: they name the shown order.
    assert [c["id"] for c in first["choices"]] == ["A", "B", "C"]


def test_practice_explains_each_answer_at_once(client: TestClient, clock: Clock) -> None:
    quiz = start(client, mode="practice", seconds=None)
    assert quiz["deadline"] is None
    first = quiz["questions"][0]
    after = client.post(
        f"/api/quizzes/{quiz['id']}/answers",
        json={"question_id": first["id"], "choice_id": key_letter(first)},
    ).json()
    shown = after["questions"][0]
    assert shown["correct"] is True and all(c["why"] for c in shown["choices"])
    assert after["questions"][1]["choices"][0]["why"] is None  # not the next one's
    page = client.post(
        f"/quizzes/{quiz['id']}/answers",
        data={"position": 2, "choice": "A"},
        headers={"HX-Request": "true"},
    )
    assert SECRET in page.text and 'id="quiz-next"' in page.text


def test_an_answer_after_the_deadline_is_refused_and_the_quiz_closes_lazily(
    client: TestClient, clock: Clock
) -> None:
    quiz = start(client, seconds=120)
    first = quiz["questions"][0]
    client.post(
        f"/api/quizzes/{quiz['id']}/answers",
        json={"question_id": first["id"], "choice_id": key_letter(first)},
    )
    clock.now += timedelta(seconds=121)  # the tab was closed; time ran out meanwhile
    late = client.post(
        f"/api/quizzes/{quiz['id']}/answers",
        json={"question_id": quiz["questions"][1]["id"], "choice_id": "A"},
    )
    assert late.status_code == 409 and "closed at 09:02:00" in late.json()["detail"]
    read = client.get(f"/api/quizzes/{quiz['id']}").json()
    assert read["closed"] is True and read["score"] == 1
    page = client.get(f"/quizzes/{quiz['id']}")
    assert "1 / 5" in page.text and "time ran out" in page.text


def test_an_answered_question_is_locked(client: TestClient, clock: Clock) -> None:
    quiz = start(client)
    question = quiz["questions"][0]
    url = f"/api/quizzes/{quiz['id']}/answers"
    assert (
        client.post(url, json={"question_id": question["id"], "choice_id": "A"}).status_code == 200
    )
    again = client.post(url, json={"question_id": question["id"], "choice_id": "B"})
    assert again.status_code == 409 and "locked" in again.json()["detail"]
    bad = client.post(url, json={"question_id": 2, "choice_id": "Z"})
    assert bad.status_code == 422


def test_the_countdown_comes_from_the_server_and_survives_a_reload(
    client: TestClient, clock: Clock
) -> None:
    quiz = start(client, seconds=600)
    clock.now += timedelta(seconds=100)
    for _ in range(2):  # a reload shows the same time left
        page = client.get(f"/quizzes/{quiz['id']}").text
        left = float(re.search(r'data-seconds-left="([\d.]+)"', page).group(1))  # type: ignore[union-attr]
        assert left == 500.0
    assert 'aria-live="polite"' in page and "quiz.js" in page


def test_bad_quiz_requests_are_refused_clearly(client: TestClient, clock: Clock) -> None:
    assert client.post("/api/quizzes", json={"count": 4}).status_code == 422
    assert client.post("/api/quizzes", json={"count": 5, "seconds": 10}).status_code == 422
    none = client.post("/api/quizzes", json={"deck": "no-such-deck", "count": 5})
    assert none.status_code == 422 and "No questions match" in none.json()["detail"]


def test_the_pages_take_a_quiz_without_scripts(client: TestClient, clock: Clock) -> None:
    started = form(
        client,
        "/quizzes",
        token_from="/quizzes",
        mode="timed",
        count="5",
        minutes="10",
        deck="torch-compile",
    )
    assert started.status_code == 303
    url = started.headers["location"]
    page = client.get(url).text
    position = re.search(r'name="position" value="(\d+)"', page).group(1)  # type: ignore[union-attr]
    answered = form(client, f"{url}/answers", token_from=url, position=position, choice="A")
    assert answered.status_code == 303
    submitted = form(client, f"{url}/submit", token_from=url)
    assert submitted.status_code == 303
    results = client.get(url).text
    assert "/ 5</strong>" in results and SECRET in results
    assert url.rsplit("/", 1)[1] in client.get("/quizzes").text  # in the history


def test_someone_elses_quiz_is_not_found(client: TestClient, clock: Clock) -> None:
    quiz = start(client)
    stranger = TestClient(client.app)
    stranger.headers["X-CSRF-Token"] = csrf_token(stranger)
    assert stranger.get(f"/api/quizzes/{quiz['id']}").status_code == 404
    assert stranger.get(f"/quizzes/{quiz['id']}").status_code == 404
    answer = stranger.post(
        f"/api/quizzes/{quiz['id']}/answers", json={"question_id": 1, "choice_id": "A"}
    )
    assert answer.status_code == 404


def test_a_guests_quizzes_move_into_the_account_they_create(
    client: TestClient, clock: Clock
) -> None:
    quiz = start(client)
    client.post(f"/api/quizzes/{quiz['id']}/submit")
    sign_up(client, "quizzer")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    assert client.get(f"/api/quizzes/{quiz['id']}").status_code == 200
    assert quiz["id"] in client.get("/quizzes").text


def test_the_export_holds_quizzes_and_reviews(client: TestClient, clock: Clock) -> None:
    quiz = start(client)
    first = quiz["questions"][0]
    client.post(
        f"/api/quizzes/{quiz['id']}/answers",
        json={"question_id": first["id"], "choice_id": key_letter(first)},
    )
    client.post(f"/api/quizzes/{quiz['id']}/submit")
    sign_up(client, "exporter")
    body = client.get("/account/export").json()
    assert [q["id"] for q in body["quizzes"]] == [quiz["id"]]
    assert body["reviews"][0]["rating"] == 3 and body["reviews"][0]["source"] == "quiz"


def test_an_answer_shown_explained_says_when_its_question_comes_back_and_why(
    client: TestClient, clock: Clock
) -> None:
    quiz = start(client, mode="practice", seconds=None)
    first, second = quiz["questions"][:2]

    def answer_on_the_page(question: dict[str, Any], letter: str) -> str:
        page = client.post(
            f"/quizzes/{quiz['id']}/answers",
            data={"position": question["id"], "choice": letter},
            headers={"HX-Request": "true"},
        )
        assert page.status_code == 200
        found = re.search(r'<p class="next-review" id="next-review">(.*?)</p>', page.text, re.S)
        assert found is not None
        return " ".join(re.sub(r"<[^>]+>", "", found.group(1)).split())

    wrong = answer_on_the_page(first, wrong_letter(first))
    assert wrong.startswith("Back in 10 min: a wrong answer comes back the same day")
    right = answer_on_the_page(second, key_letter(second))
    assert re.match(r"Next review in \d+ days?: a right answer waits at least a day", right)
    # Ten minutes later the wrong one alone is due; answered right in review, nothing is.
    clock.now = START + timedelta(minutes=10)
    assert "Review 1 question now" in client.get("/review").text
    again = start(client, mode="review", seconds=None)
    assert len(again["questions"]) == 1
    back = client.post(
        f"/quizzes/{again['id']}/answers",
        data={"position": 1, "choice": key_letter(again["questions"][0])},
        headers={"HX-Request": "true"},
    ).text
    assert re.search(r"Next review in \d+ days?</strong>:\s+a right answer waits", back)
    clock.now = START + timedelta(minutes=30)
    assert "Nothing is due for review." in client.get("/review").text
