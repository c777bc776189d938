"""The account page's choice of short learning steps in spaced review (app/study/review.py
schedules by it): off by default, turned on and off by its form, bad input refused with
nothing changed, and no form for a guest."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import User
from tests.support.forms import form, sign_up


def steps_of(engine: Engine, username: str) -> bool:
    with Session(engine) as session:
        return session.exec(
            select(User.short_learning_steps).where(User.username == username)
        ).one()


def box(page: str) -> str:
    found = re.search(r'<input type="checkbox" name="short_learning_steps"[^>]*>', page)
    assert found is not None, "the account page has the review steps form"
    return found.group(0)


def test_short_learning_steps_are_off_until_ticked_and_off_again_when_unticked(
    client: TestClient, engine: Engine
) -> None:
    sign_up(client, "ines")
    page = client.get("/account").text
    assert "checked" not in box(page) and "Short learning steps: see new questions" in page
    assert not steps_of(engine, "ines")
    on = form(client, "/account/review-steps", token_from="/account", short_learning_steps="true")
    assert on.status_code == 200 and "Short learning steps are on" in on.text
    assert "checked" in box(on.text) and steps_of(engine, "ines")
    off = form(client, "/account/review-steps", token_from="/account")  # the box unticked
    assert off.status_code == 200 and "Short learning steps are off" in off.text
    assert "checked" not in box(off.text) and not steps_of(engine, "ines")


def test_a_bad_choice_is_refused_and_changes_nothing(client: TestClient, engine: Engine) -> None:
    sign_up(client, "jules")
    form(client, "/account/review-steps", token_from="/account", short_learning_steps="true")
    bad = form(client, "/account/review-steps", token_from="/account", short_learning_steps="often")
    assert bad.status_code == 422 and "short_learning_steps" in bad.text
    assert steps_of(engine, "jules")
    forged = client.post(
        "/account/review-steps", data={"short_learning_steps": "false"}, follow_redirects=False
    )
    assert forged.status_code == 403, "no CSRF token: refused"
    assert steps_of(engine, "jules")


def test_a_guest_has_no_such_choice(client: TestClient) -> None:
    refused = form(client, "/account/review-steps", token_from="/", short_learning_steps="true")
    assert refused.status_code == 303
    assert refused.headers["location"].startswith("/signin")
