"""The item page lists its exercises with the reader's status on each (one query, none for
a first-time guest); a graded submission moves the items its exercise drills; the dashboard
counts exercises solved per topic."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.forms import sign_up
from tests.support.grading import scripted, submit
from tests.support.statements import statements

SOFTMAX = "stable-softmax"  # drills activation-functions, loss-functions, nan-loss-debugging
ITEM = "/items/activation-functions"


def test_the_item_page_shows_its_exercises_with_their_status(client: TestClient) -> None:
    fresh = client.get(ITEM).text  # a first request: no learner, no status to read
    assert (
        f'href="/exercises/{SOFTMAX}"' in fresh
        and "status-pill status-"
        not in fresh.split('id="exercises-heading"')[1].split("</section>")[0]
    )
    client = scripted(client)
    client.get(ITEM)
    with statements(client.app.state.backprop.engine) as seen:  # type: ignore[attr-defined]
        page = client.get(ITEM).text
    drills = page.split('id="exercises-heading"')[1].split("</section>")[0]
    assert "Not tried</span>" in drills
    assert sum("hintview" in s for s in seen) == 1  # the statuses: one query
    client.post(f"/api/exercises/{SOFTMAX}/hints")
    submit(client, SOFTMAX, "passes")
    drills = client.get(ITEM).text.split('id="exercises-heading"')[1].split("</section>")[0]
    assert "status-solved-with-hints" in drills and "Solved with hints</span>" in drills


def test_a_submission_makes_its_items_practised(client: TestClient) -> None:
    sign_up(client, "practiser")
    client = scripted(client)
    client.post(f"/api/exercises/{SOFTMAX}/hints")  # a learner, with nothing on the items
    assert client.get("/api/me/items/loss-functions").json()["status"] == "new"
    submit(client, SOFTMAX, "fail: values")
    for slug in ("activation-functions", "loss-functions", "nan-loss-debugging"):
        assert client.get(f"/api/me/items/{slug}").json()["status"] == "practising"


def test_the_dashboard_counts_exercises_solved_per_topic(client: TestClient) -> None:
    client = scripted(client)
    listed = client.get("/api/exercises", params={"topic": "foundations"}).json()
    page = client.get("/dashboard").text
    assert "Code exercises solved" in page
    assert f"0 of {len(listed)} exercises solved" in page
    submit(client, SOFTMAX, "passes")
    page = client.get("/dashboard").text
    assert 'href="/exercises?topic=foundations"' in page
    assert f"1 of {len(listed)} exercises solved" in page
    assert f"1 / {len(listed)}</span>" in page
