"""Mock interviews (app/interview/routes/mock.py): prompts one after another, model answers only
once every prompt is done, grading by key points into reviews and recall checks."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from app.models import AttemptQuestion, Item, Question, QuizPrompt, RecallCheck, ReviewEvent
from tests.support.forms import csrf_token, form


def test_a_mock_interview_from_first_prompt_to_grades(client: TestClient, engine: Engine) -> None:
    started = form(
        client, "/quizzes", token_from="/quizzes", mode="mock", count="3", deck="deep-learning"
    )
    assert started.status_code == 303
    url = started.headers["location"]
    for n in (1, 2, 3):
        page = client.get(url).text
        assert f"Prompt {n} of 3" in page and 'id="prompt-timer"' in page
        assert "model-answer" not in page  # no model answer while answering
        moved = form(client, f"{url}/mock/next", token_from=url, position=str(n))
        assert moved.status_code == 303
    grading = client.get(url).text
    assert "Grade your answers" in grading and grading.count('class="model-answer"') == 3
    token = csrf_token(client, url)
    fields = re.findall(r'name="(covered-\d+)" value="(\d+)"', grading)
    first = [value for name, value in fields if name == "covered-1"]
    data = {"csrf_token": token, "covered-1": first}  # every point of prompt 1, no other
    graded = client.post(f"{url}/mock/grade", data=data, follow_redirects=False)
    assert graded.status_code == 303
    results = client.get(url).text
    assert "1 / 3" in results and "Passed: you covered" in results
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(ReviewEvent)).one() == 3
        # The item's own prompts count as recall checks; questions the bank adds after them
        # are reviewed but leave mastery alone (app/progress/study.py).
        drawn = session.exec(
            select(Question.item_id, Question.position).join(
                AttemptQuestion, col(AttemptQuestion.question_id) == col(Question.id)
            )
        ).all()
        own = [
            item_id
            for item_id, position in drawn
            if session.exec(
                select(QuizPrompt.id).where(
                    QuizPrompt.item_id == item_id, QuizPrompt.position == position
                )
            ).first()
        ]
        assert session.exec(select(func.count()).select_from(RecallCheck)).one() == len(own)


def test_a_mock_interview_cannot_skip_ahead_or_be_graded_early(client: TestClient) -> None:
    started = form(
        client, "/quizzes", token_from="/quizzes", mode="mock", count="3", deck="deep-learning"
    )
    url = started.headers["location"]
    ahead = form(client, f"{url}/mock/next", token_from=url, position="2")
    assert ahead.status_code == 409
    early = form(client, f"{url}/mock/grade", token_from=url)
    assert early.status_code == 400 and "every prompt" in early.text
    too_many = form(client, "/quizzes", token_from="/quizzes", mode="mock", count="11")
    assert too_many.status_code == 422


def test_long_names_in_model_answers_and_key_points_may_wrap_at_their_joints(
    client: TestClient, engine: Engine
) -> None:
    long_name = "torch.nn.parallel.DistributedDataParallel"
    with Session(engine) as session:
        for question in session.exec(select(Question)).all():
            question.model_answer = f"Wrap the model in {long_name} after init."
            question.key_points = f"names {long_name}\nsays why"
            session.add(question)
        session.commit()
    started = form(
        client, "/quizzes", token_from="/quizzes", mode="mock", count="3", deck="deep-learning"
    )
    url = started.headers["location"]
    for n in (1, 2, 3):
        form(client, f"{url}/mock/next", token_from=url, position=str(n))
    grading = client.get(url).text
    wrapped = "torch.<wbr>nn.<wbr>parallel.<wbr>DistributedDataParallel"
    answer = re.search(r'<p class="model-answer">(.*?)</p>', grading, re.S)
    assert answer is not None and wrapped in answer.group(1)
    assert f"> names {wrapped}</label>" in grading


def topic_of_code_questions_but_two(engine: Engine) -> tuple[str, set[int]]:
    """The topic with the most questions, made to show code in every question but two (the
    draw is by chance: this makes what it may draw certain). Its slug, and the two."""
    with Session(engine) as session:
        rows = session.exec(
            select(Item.topic_slug, Question).join(Item, col(Item.id) == Question.item_id)
        ).all()
        topics: dict[str, list[Question]] = {}
        for topic, question in rows:
            topics.setdefault(topic, []).append(question)
        topic, questions = max(topics.items(), key=lambda pair: len(pair[1]))
        assert len(questions) > 10
        questions.sort(key=lambda q: q.id or 0)
        for question in questions:
            question.code = "" if question in questions[:2] else "print(2 + 2)"
            session.add(question)
        session.commit()
        return topic, {q.id for q in questions[:2] if q.id is not None}


def drawn(engine: Engine, url: str) -> list[tuple[int | None, str]]:
    """The questions a quiz drew: each one's id and the code it shows."""
    with Session(engine) as session:
        return list(
            session.exec(
                select(Question.id, Question.code)
                .join(AttemptQuestion, col(AttemptQuestion.question_id) == col(Question.id))
                .where(AttemptQuestion.attempt_id == url.rsplit("/", 1)[1])
            )
        )


def test_a_mock_interview_asks_conceptual_prompts_only_by_default(
    client: TestClient, engine: Engine
) -> None:
    topic, conceptual = topic_of_code_questions_but_two(engine)
    page = client.get("/quizzes").text
    box = re.search(
        r'<label class="choice-line">(<input[^>]*name="code_prompts"[^>]*>)([^<]*)', page
    )
    assert box is not None and "checked" not in box.group(1)  # unticked unless asked
    assert box.group(2).strip() == "Mock interview: include code-reading prompts"
    started = form(client, "/quizzes", token_from="/quizzes", mode="mock", count="5", topic=topic)
    assert started.status_code == 303
    # Only the two conceptual questions of the topic, though five prompts were asked for.
    assert {qid for qid, _ in drawn(engine, started.headers["location"])} == conceptual


def test_a_mock_interview_may_ask_code_reading_prompts_when_ticked(
    client: TestClient, engine: Engine
) -> None:
    topic, _ = topic_of_code_questions_but_two(engine)
    started = form(
        client,
        "/quizzes",
        token_from="/quizzes",
        mode="mock",
        count="10",
        topic=topic,
        code_prompts="true",
    )
    assert started.status_code == 303
    questions = drawn(engine, started.headers["location"])
    assert len(questions) == 10 and sum(1 for _, code in questions if code) >= 8
    assert "Prompt 1 of 10" in client.get(started.headers["location"]).text
    unclear = form(
        client, "/quizzes", token_from="/quizzes", mode="mock", count="3", code_prompts="maybe"
    )
    assert unclear.status_code == 422
