"""Levelled hints in the API: served one at a time in level order, the failing category's
first after a failing submission, each recorded once; 409 when none is left."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import HintView
from tests.support.forms import sign_up
from tests.support.grading import scripted, submit

SOFTMAX = "stable-softmax"  # hints: concept/edge cases, approach/values, approach/edge, step/values
GELU = "gelu-autograd-function"  # every hint answers gradients


def test_hints_come_one_at_a_time_in_level_order(client: TestClient, engine: Engine) -> None:
    client = scripted(client)
    url = f"/api/exercises/{SOFTMAX}/hints"
    before = client.get(url).json()
    assert before["total"] == 4 and before["shown"] == []
    assert before["next"] == {
        "number": 1,
        "level": "concept",
        "category": "edge cases",
        "answers_failing_test": False,
    }
    assert "text" not in before["next"]
    shown = [client.post(url).json()["hint"] for _ in range(4)]
    assert [(h["number"], h["level"], h["index"]) for h in shown] == [
        (1, "concept", 0),
        (2, "approach", 1),
        (3, "approach", 2),
        (4, "step", 3),
    ]
    assert shown[0]["text"].startswith("exp(1000) is inf")
    none_left = client.post(url)
    assert none_left.status_code == 409 and "Every hint" in none_left.json()["detail"]
    after = client.get(url).json()
    assert [h["index"] for h in after["shown"]] == [0, 1, 2, 3] and after["next"] is None
    with Session(engine) as session:
        rows = session.exec(select(HintView).order_by(HintView.hint_index)).all()
    assert [(r.hint_index, r.level, r.category) for r in rows] == [
        (0, "concept", "edge cases"),
        (1, "approach", "values"),
        (2, "approach", "edge cases"),
        (3, "step", "values"),
    ]
    assert all(r.learner_id is not None and r.visitor for r in rows)


def test_a_failing_test_offers_its_categorys_hint_first(client: TestClient) -> None:
    client = scripted(client)
    url = f"/api/exercises/{SOFTMAX}/hints"
    assert client.post(url).json()["hint"]["category"] == "edge cases"  # the concept
    assert client.get(url).json()["next"]["category"] == "values"  # in order: approach 1
    result = submit(client, SOFTMAX, "fail: edge cases", mode="run")
    assert result["verdict"] == "failed"
    after_failure = client.get(url).json()
    assert after_failure["failing_categories"] == ["edge cases"]
    assert after_failure["next"] == {
        "number": 2,
        "level": "approach",
        "category": "edge cases",
        "answers_failing_test": True,
    }
    assert client.post(url).json()["hint"]["index"] == 2
    # No edge-cases hint left: the next in order, which answers no failing test.
    assert client.get(url).json()["next"]["answers_failing_test"] is False
    submit(client, SOFTMAX, "passes")
    assert client.get(url).json()["failing_categories"] == []


def test_a_failing_gradients_test_offers_what_ctx_must_save(client: TestClient) -> None:
    client = scripted(client)
    url = f"/api/exercises/{GELU}/hints"
    client.post(url)
    client.post(url)  # the two concepts
    submit(client, GELU, "fail: gradients\nfail: values")
    ctx = client.post(url).json()["hint"]
    assert (ctx["number"], ctx["level"], ctx["category"]) == (3, "approach", "gradients")
    assert "ctx.save_for_backward" in ctx["text"]


def test_asking_for_a_categorys_hint(client: TestClient) -> None:
    client = scripted(client)
    url = f"/api/exercises/{SOFTMAX}/hints"
    values = client.post(url, json={"category": "values"}).json()["hint"]
    assert (values["index"], values["level"]) == (1, "approach")
    assert client.post(url, json={"category": "values"}).json()["hint"]["index"] == 3
    left = client.post(url, json={"category": "values"})
    assert left.status_code == 409 and "values" in left.json()["detail"]
    unknown = client.post(url, json={"category": "gradients"})
    assert unknown.status_code == 422 and "edge cases, values" in unknown.json()["detail"]
    assert [h["index"] for h in client.get(url).json()["shown"]] == [1, 3]
    assert client.get("/api/exercises/nope/hints").status_code == 404
    assert client.post("/api/exercises/nope/hints").status_code == 404


def test_a_hint_is_recorded_once_and_learners_see_only_their_own(
    client: TestClient, engine: Engine
) -> None:
    client = scripted(client)
    sign_up(client, "hinted")
    client = scripted(client)
    url = f"/api/exercises/{SOFTMAX}/hints"
    client.post(url)
    with Session(engine) as session:
        rows = session.exec(select(HintView)).all()
    assert len(rows) == 1 and rows[0].visitor.startswith("user:")
    client.cookies.clear()
    other = scripted(client)
    assert other.get(url).json()["shown"] == []


def test_the_page_lists_the_hints_shown_and_names_the_failing_category(
    client: TestClient,
) -> None:
    client = scripted(client)
    page = client.get(f"/exercises/{SOFTMAX}").text
    assert 'id="get-hint"' in page and ">Get a hint</button>" in page
    assert "Next: Hint 1 of 4 · concept · answers: edge cases" in page
    client.post(f"/api/exercises/{SOFTMAX}/hints")
    submit(client, SOFTMAX, "fail: values")
    page = client.get(f"/exercises/{SOFTMAX}").text
    assert "Hint 1 of 4 · concept · answers: edge cases" in page
    assert "exp(1000) is inf" in page
    assert ">Get a hint for values</button>" in page
    assert "Next: Hint 2 of 4 · approach · answers: values" in page
