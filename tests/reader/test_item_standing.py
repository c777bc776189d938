"""The item page's one statement (item_standing.read) says what the services' own reads say,
part by part, for a learner with something of every kind: a progress row with a note and a
bookmark, checks answered twice, more runs than the page lists, a draft, a hint and a
submission, and a question due for review."""

from __future__ import annotations

from datetime import timedelta

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.domain import Identity
from app.exercises import catalogue, status
from app.models import Item, User, utcnow
from app.platform import learners
from app.progress import study
from app.progress.history import ITEM_RUNS
from app.reader import item_standing
from app.study import review
from tests.support.bank import add_model_answers
from tests.support.forms import csrf_token, form, sign_up
from tests.support.grading import scripted, submit
from tests.support.runs import events_of


def test_one_statement_reads_what_each_part_reads_alone(client: TestClient, engine: Engine) -> None:
    add_model_answers(engine, "dropout")
    sign_up(client, "wren")
    form(client, "/items/dropout/bookmark", on="true")
    form(client, "/items/dropout/note", text="scale by 1/(1-p) while training")
    for prompt, knew in (("1", "true"), ("2", "true"), ("1", "false")):
        form(client, "/items/dropout/checks", prompt=prompt, knew=knew)
    token = csrf_token(client, "/items/dropout")
    client.post("/items/dropout/open", data={"position": "1", "csrf_token": token})
    headers = {"X-CSRF-Token": token, "HX-Request": "true"}
    client.post("/items/dropout/drafts/1", data={"code": "x = 1"}, headers=headers)
    for n in range(ITEM_RUNS + 2):  # one at a time, each followed to its end
        body = {"code": f"print({n})", "backend": "cpu", "item": "dropout", "sample": 1}
        started = client.post("/api/runs", json=body, headers=headers)
        assert started.status_code == 202
        events_of(client, started.json()["id"])
    client = scripted(client)
    assert client.post("/api/exercises/inverted-dropout/hints").status_code == 200
    submit(client, "inverted-dropout", "pass")

    with Session(engine) as session:
        user = session.exec(select(User).where(User.username == "wren")).one()
        item = session.exec(select(Item).where(Item.slug == "dropout")).one()
        identity = Identity(visitor="v", user_id=user.id, username="wren")
        scope = learners.resolve(session, identity)
        assert scope is not None
        expected = study.study_view(scope, item)
        item_id = item.id
        session.commit()
    later = utcnow() + timedelta(hours=1)  # the open answer above is due by then
    with engine.connect() as connection:
        slugs = [e.slug for e in catalogue.for_item(connection, "dropout")]
        expected_statuses = status.statuses(connection, scope.learner_id, slugs)
        expected_due = review.due_for(connection, identity, now=later)
        found = item_standing.read(
            connection, identity, item_id=item_id, exercise_slugs=slugs, now=later
        )
    assert found.learner_id == scope.learner_id
    assert found.progress == expected.progress and found.progress is not None
    assert found.progress.bookmarked and "1/(1-p)" in found.progress.note
    assert found.latest_checks == expected.latest_checks == {1: False, 2: True}
    assert found.runs == expected.runs and len(found.runs) == ITEM_RUNS
    assert found.drafts == {1: "x = 1"}
    assert found.exercise_statuses == expected_statuses
    assert "inverted-dropout" in found.exercise_statuses
    assert found.due == expected_due == 1


def test_someone_with_no_learner_has_an_empty_standing(engine: Engine) -> None:
    stranger = Identity(visitor="never-seen", user_id=None, username=None, known_browser=True)
    with engine.connect() as connection:
        found = item_standing.read(
            connection, stranger, item_id=1, exercise_slugs=["inverted-dropout"], now=utcnow()
        )
    assert found == item_standing.ItemStanding()
