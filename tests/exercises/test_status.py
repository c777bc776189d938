"""Each exercise's status for its learner, in the API and the list page: new, attempted,
solved, solved with hints, solved after reveal."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.support.grading import scripted, submit

SOFTMAX, GELU, ADAMW = "stable-softmax", "gelu-autograd-function", "adamw-bias-correction"


def listed(client: TestClient) -> dict[str, str]:
    return {e["slug"]: e["status"] for e in client.get("/api/exercises").json()}


def test_statuses_follow_submissions_hints_and_reveals(client: TestClient) -> None:
    client = scripted(client)
    assert set(listed(client).values()) == {"new"}
    client.post(f"/api/exercises/{SOFTMAX}/hints")
    submit(client, GELU, "fail: values")
    client.post(f"/api/exercises/{ADAMW}/solution", json={"give_up": True})
    now = listed(client)
    assert (now[SOFTMAX], now[GELU], now[ADAMW]) == ("attempted",) * 3

    submit(client, SOFTMAX, "passes")  # a hint was shown before
    submit(client, GELU, "passes")  # no help
    submit(client, ADAMW, "passes")  # after the reveal
    client.post(f"/api/exercises/{GELU}/hints")  # help after solving changes nothing
    now = listed(client)
    assert now[SOFTMAX] == "solved-with-hints"
    assert now[GELU] == "solved"
    assert now[ADAMW] == "solved-after-reveal"
    others = {s for s in now if s not in (SOFTMAX, GELU, ADAMW)}
    assert {now[s] for s in others} == {"new"}

    for status, slug in (
        ("solved", GELU),
        ("solved-with-hints", SOFTMAX),
        ("solved-after-reveal", ADAMW),
    ):
        found = client.get("/api/exercises", params={"status": status}).json()
        assert [e["slug"] for e in found] == [slug]
        page = client.get("/exercises", params={"status": status}).text
        assert f'href="/exercises/{slug}"' in page and page.count('class="item-row"') == 1
    assert client.get("/api/exercises", params={"status": "solved-twice"}).status_code == 422
    page = client.get("/exercises").text
    assert "Solved with hints</span>" in page and "Solved after reveal</span>" in page
    assert '<option value="solved-after-reveal"' in page


def test_a_run_mode_pass_is_not_a_solve(client: TestClient) -> None:
    client = scripted(client)
    submit(client, SOFTMAX, "passes", mode="run")
    assert listed(client)[SOFTMAX] == "attempted"
