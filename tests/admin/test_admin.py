"""Authoring insight (app/admin/routes/admin.py, app/admin/authoring.py) for admins, who are
made with a command; everyone else is refused."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.admin.authoring import _point_biserial
from app.cli import main as cli
from tests.support.bank import KEY_TEXT, add_bank
from tests.support.forms import csrf_token, sign_up


def test_only_admins_see_question_insight(
    client: TestClient, database_url: str, monkeypatch: pytest.MonkeyPatch, engine: Engine
) -> None:
    add_bank(engine)
    assert client.get("/admin/questions", follow_redirects=False).status_code == 303  # sign in
    sign_up(client, "author")
    refused = client.get("/admin/questions")
    assert refused.status_code == 403 and "backprop admin grant" in refused.text
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert cli(["admin", "grant", "author"]) == 0
    assert cli(["admin", "grant", "nobody-here"]) == 1
    client.headers["X-CSRF-Token"] = csrf_token(client)
    for right in (True, True, False, False, False, True):  # six quizzes of five
        quiz = client.post(
            "/api/quizzes", json={"deck": "torch-compile", "count": 5, "mode": "practice"}
        ).json()
        for question in quiz["questions"]:
            key = next(c["id"] for c in question["choices"] if c["text"].startswith(KEY_TEXT))
            other = next(c["id"] for c in question["choices"] if c["id"] != key)
            client.post(
                f"/api/quizzes/{quiz['id']}/answers",
                json={"question_id": question["id"], "choice_id": key if right else other},
            )
        client.post(f"/api/quizzes/{quiz['id']}/submit")
    page = client.get("/admin/questions")
    assert page.status_code == 200 and "Question insight" in page.text
    assert "nobody picks" in page.text  # each quiz picked only the key or the first distractor
    assert cli(["admin", "revoke", "author"]) == 0
    assert client.get("/admin/questions").status_code == 403


def test_discrimination_is_the_point_biserial_correlation() -> None:
    # Those who got it right scored higher on the rest: a positive correlation, equal to
    # Pearson's r between right (1/0) and the rest of the score.
    pairs = [(True, 4), (True, 3), (False, 1), (False, 0), (True, 1)]
    xs, ys = [float(ok) for ok, _ in pairs], [float(r) for _, r in pairs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    cov = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    sx = sum((x - mx) ** 2 for x in xs) ** 0.5
    sy = sum((y - my) ** 2 for y in ys) ** 0.5
    assert _point_biserial(pairs) == pytest.approx(cov / (sx * sy))
    assert _point_biserial([(True, 1), (True, 1)]) is None  # everyone right: undefined
