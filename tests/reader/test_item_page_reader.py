"""The item page resolves its reader and reads their standing in one thread hop, the standing
in one statement (app/reader/routes/item_page.py, app/reader/item_standing.py). Nothing of it is
kept between requests: a token or session ended in the database stops at once, and an
answer shows in the same page's next load."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import delete, event, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from app.models import ApiToken, Item, LoginSession, Question, utcnow
from tests.support.bank import add_model_answers
from tests.support.forms import PASSWORD, csrf_token, form, sign_up


def _bearer(client: TestClient, username: str) -> dict[str, str]:
    sign_up(client, username)
    token = client.post("/api/token", data={"username": username, "password": PASSWORD})
    client.cookies.clear()  # the page is read with the token alone
    return {"Authorization": f"Bearer {token.json()['access_token']}"}


def test_an_expired_or_deleted_bearer_token_is_refused_by_the_next_item_page(
    client: TestClient, engine: Engine
) -> None:
    auth = _bearer(client, "tove")
    assert client.get("/items/dropout", headers=auth).status_code == 200
    with Session(engine) as session:
        past = utcnow() - timedelta(seconds=1)
        session.execute(update(ApiToken).values(expires_at=past))
        session.commit()
    expired = client.get("/items/dropout", headers=auth)
    assert expired.status_code == 401 and "has expired" in expired.text
    with Session(engine) as session:
        session.execute(delete(ApiToken))
        session.commit()
    deleted = client.get("/items/dropout", headers=auth)
    assert deleted.status_code == 401 and "not valid" in deleted.text
    assert client.get("/items/dropout").status_code == 200  # without it: a guest's page


def test_a_session_ended_elsewhere_reads_as_a_guest_on_the_next_item_page(
    client: TestClient, engine: Engine
) -> None:
    sign_up(client, "uma")
    form(client, "/items/dropout/bookmark", on="true")
    page = client.get("/items/dropout").text
    assert "<span>uma</span>" in page and "Sign out" in page
    with Session(engine) as session:  # signed out on another device, or deleted by an admin
        session.execute(delete(LoginSession))
        session.commit()
    page = client.get("/items/dropout").text
    assert "<span>uma</span>" not in page and "Sign in" in page


def test_a_review_answer_changes_the_item_pages_due_count_at_once(
    client: TestClient, engine: Engine
) -> None:
    add_model_answers(engine, "dropout")
    sign_up(client, "vera")
    token = csrf_token(client, "/items/dropout")
    client.post("/items/dropout/open", data={"position": "1", "csrf_token": token})  # Again
    assert "due</span>" not in client.get("/items/dropout").text  # due in a minute
    later = utcnow() + timedelta(hours=1)
    client.app.state.backprop.clock = lambda: later  # type: ignore[attr-defined]
    assert "1 due</span>" in client.get("/items/dropout").text
    with Session(engine) as session:
        item = session.exec(select(Item).where(Item.slug == "dropout")).one()
        question = session.exec(
            select(Question).where(col(Question.item_id) == item.id, Question.position == 1)
        ).one()
    every_point = [str(n) for n in range(1, len(question.key_point_list) + 1)]
    token = csrf_token(client, "/items/dropout")
    answered = client.post(
        "/items/dropout/open", data={"position": "1", "covered": every_point, "csrf_token": token}
    )
    assert answered.status_code == 200
    assert "due</span>" not in client.get("/items/dropout").text


def test_a_returning_guest_sees_their_due_count_on_the_item_page(
    client: TestClient, engine: Engine
) -> None:
    add_model_answers(engine, "dropout")
    token = csrf_token(client, "/items/dropout")
    client.post("/items/dropout/open", data={"position": "1", "csrf_token": token})
    later = utcnow() + timedelta(hours=1)
    client.app.state.backprop.clock = lambda: later  # type: ignore[attr-defined]
    assert "1 due</span>" in client.get("/items/dropout").text


def test_a_returning_readers_item_page_takes_one_pooled_connection(client: TestClient) -> None:
    """The reader's owner and standing are read on one connection: a page of a signed-in
    reader checks out one from the pool for them, not one for the token and one for the
    page."""
    auth = _bearer(client, "wren")
    assert client.get("/items/dropout", headers=auth).status_code == 200  # the first visit
    engine = client.app.state.backprop.engine  # type: ignore[attr-defined]
    taken: list[str] = []

    def count(*_: Any) -> None:
        if threading.current_thread().name != "visit-writer":  # its timed flush of visits
            taken.append(threading.current_thread().name)

    event.listen(engine, "engine_connect", count)
    try:
        for _ in range(3):
            page = client.get("/items/dropout", headers=auth)
            assert page.status_code == 200 and "<span>wren</span>" in page.text
    finally:
        event.remove(engine, "engine_connect", count)
    # On PostgreSQL the app's clock asks the database for now on a connection of its own
    # (app.db.DatabaseClock): one more per page there.
    per_page = 1 if engine.dialect.name == "sqlite" else 2
    assert len(taken) == 3 * per_page, taken
