"""Questions beyond an item's own prompts, and questions that show code: quizzes draw all of
an item's questions, every one keeps its own review card, and the code is shown highlighted
with the prompt in quizzes, results, mock interviews, the item page and the API."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from app.importer.render import highlight_code
from app.models import Item, Question, QuizPrompt, RecallCheck, ReviewCard
from tests.support.bank import KEY_TEXT, add_bank
from tests.support.forms import csrf_token, form

CODE = "import torch\nprint(torch.ones(2, 3).sum(dim=0).shape)"


def show_code(engine: Engine, deck: str) -> list[int]:
    """Give every question of `deck` the code above; their ids."""
    with Session(engine) as session:
        questions = session.exec(
            select(Question)
            .join(Item, col(Item.id) == col(Question.item_id))
            .where(Item.deck_slug == deck)
        ).all()
        for question in questions:
            question.code, question.code_html = CODE, highlight_code(CODE)
            session.add(question)
        session.commit()
        return [q.id for q in questions if q.id is not None]


def start(client: TestClient, **body: Any) -> dict[str, Any]:
    payload = {"deck": "torch-compile", "seconds": None, "mode": "practice", **body}
    response = client.post("/api/quizzes", json=payload)
    assert response.status_code == 201, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_quiz_draws_every_question_and_each_keeps_its_own_card(
    client: TestClient, engine: Engine
) -> None:
    added = add_bank(engine, deck="torch-compile", per_item=4)
    ids = show_code(engine, "torch-compile")
    assert len(ids) == added >= 20
    client.headers["X-CSRF-Token"] = csrf_token(client)
    with Session(engine) as session:
        prompts = session.exec(select(func.count()).select_from(QuizPrompt)).one()
    quiz = start(client, count=30)
    assert len(quiz["questions"]) == min(30, added)
    positions = {int(re.findall(r"\d+", q["prompt"])[-1]) for q in quiz["questions"]}
    assert {3, 4} <= positions  # not only the items' first two
    for question in quiz["questions"]:
        assert question["code"] == CODE
        key = next(c["id"] for c in question["choices"] if c["text"].startswith(KEY_TEXT))
        answered = client.post(
            f"/api/quizzes/{quiz['id']}/answers",
            json={"question_id": question["id"], "choice_id": key},
        )
        assert answered.status_code == 200, answered.text
    with Session(engine) as session:
        cards = session.exec(select(ReviewCard.question_id)).all()
        checks = session.exec(select(func.count()).select_from(RecallCheck)).one()
    assert len(cards) == len(set(cards)) == len(quiz["questions"]) and set(cards) <= set(ids)
    # Only answers to the items' own prompts are recall checks towards mastery.
    assert 0 < checks <= prompts
    assert client.post(f"/api/quizzes/{quiz['id']}/submit").status_code == 200
    results = client.get(f"/quizzes/{quiz['id']}").text
    assert results.count('class="hl question-code"') == len(quiz["questions"])
    assert '<span class="n">torch</span>' in results  # highlighted, not plain text


def test_code_is_shown_while_answering_and_in_the_mock_interview(
    client: TestClient, engine: Engine
) -> None:
    add_bank(engine, deck="torch-compile", per_item=3)
    show_code(engine, "torch-compile")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    quiz = start(client, count=5, mode="timed", seconds=300)
    page = client.get(f"/quizzes/{quiz['id']}").text
    assert page.count('class="hl question-code"') == 1  # the current question's
    # Focusable, so that a keyboard can scroll a line wider than a phone.
    assert '<pre class="hl question-code" tabindex="0">' in page
    # Code-reading prompts in a mock are the learner's choice (conceptual ones by default).
    started = form(
        client,
        "/quizzes",
        token_from="/quizzes",
        mode="mock",
        count="3",
        deck="torch-compile",
        code_prompts="true",
    )
    url = started.headers["location"]
    for n in (1, 2, 3):
        assert 'class="hl question-code"' in client.get(url).text
        assert form(client, f"{url}/mock/next", token_from=url, position=str(n)).status_code == 303
    grading = client.get(url).text
    assert grading.count('class="hl question-code"') == 3
    token = csrf_token(client, url)
    graded = client.post(f"{url}/mock/grade", data={"csrf_token": token}, follow_redirects=False)
    assert graded.status_code == 303


def test_the_item_page_shows_a_prompts_code(client: TestClient, engine: Engine) -> None:
    add_bank(engine, deck="torch-compile", per_item=1)
    show_code(engine, "torch-compile")
    with Session(engine) as session:
        slug = session.exec(
            select(Item.slug)
            .join(QuizPrompt, col(QuizPrompt.item_id) == col(Item.id))
            .where(Item.deck_slug == "torch-compile")
        ).first()
    page = client.get(f"/items/{slug}").text
    assert 'class="hl question-code"' in page
