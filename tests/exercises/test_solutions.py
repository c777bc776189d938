"""The solution: refused before a failed Submit unless the learner gives up, recorded once,
shown again on reload with the editorial rendered and the last submission beside it."""

from __future__ import annotations

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import SolutionReveal
from app.settings import PROJECT_ROOT
from tests.support.forms import sign_up
from tests.support.grading import scripted, submit

SLUG = "stable-softmax"
FOLDER = PROJECT_ROOT / "content" / "exercises" / SLUG
URL = f"/api/exercises/{SLUG}/solution"


def reveals(engine: Engine) -> list[SolutionReveal]:
    with Session(engine) as session:
        return list(session.exec(select(SolutionReveal)).all())


def test_the_solution_is_refused_before_a_failed_submit(client: TestClient, engine: Engine) -> None:
    client = scripted(client)
    refused = client.post(URL)
    assert refused.status_code == 409
    assert "after a failed submission" in refused.json()["detail"]
    submit(client, SLUG, "fail: values", mode="run")  # Run checks the visible tests only
    assert client.post(URL, json={"give_up": False}).status_code == 409
    submit(client, SLUG, "passes")
    assert client.post(URL).status_code == 409  # a passing Submit is no failure
    assert client.get(URL).status_code == 409
    assert reveals(engine) == []
    page = client.get(f"/exercises/{SLUG}").text
    assert 'id="reveal-solution" aria-describedby="reveal-note" disabled' in page
    assert 'id="give-up"' in page and 'id="solution-code"' not in page
    assert client.post("/api/exercises/nope/solution", json={"give_up": True}).status_code == 404


def test_after_a_failed_submit_it_comes_with_the_editorial_and_is_recorded_once(
    client: TestClient, engine: Engine
) -> None:
    client = scripted(client)
    sign_up(client, "revealer")
    client = scripted(client)
    submit(client, SLUG, "fail: gradients")
    assert (
        'id="reveal-solution" aria-describedby="reveal-note" >'
        in client.get(f"/exercises/{SLUG}").text
    )
    body = client.post(URL).json()
    assert body["code"] == (FOLDER / "reference.py").read_text()
    assert body["editorial_markdown"] == (FOLDER / "editorial.md").read_text()
    assert "Why it is written this way</h2>" in body["editorial_html"]  # Markdown, rendered
    assert "<code>keepdim=True</code>" in body["editorial_html"]
    again = client.post(URL).json()
    assert again["revealed_at"] == body["revealed_at"]
    assert client.get(URL).json()["code"] == body["code"]
    rows = reveals(engine)
    assert len(rows) == 1 and rows[0].visitor.startswith("user:") and rows[0].learner_id
    exported = client.get("/api/me/export").json()
    assert [r["exercise"] for r in exported["solution_reveals"]] == [SLUG]


def test_giving_up_reveals_it_without_a_submission(client: TestClient) -> None:
    client = scripted(client)
    body = client.post(URL, json={"give_up": True}).json()
    assert body["code"] == (FOLDER / "reference.py").read_text()
    assert body["diff"] is None  # nothing submitted, nothing to compare
    page = client.get(f"/exercises/{SLUG}").text
    assert 'id="solution-code"' in page and 'id="give-up"' not in page
    assert "You submitted no code for this exercise" in page


def test_the_diff_sets_the_last_submission_beside_the_reference(client: TestClient) -> None:
    client = scripted(client)
    reference = (FOLDER / "reference.py").read_text()
    lines = reference.splitlines()
    target = next(i for i, line in enumerate(lines) if "amax" in line)
    mine = lines.copy()
    mine[target] = "    m = 0  # fail: values"
    submit(client, SLUG, "fail: values\n" + "\n".join(mine))
    diff = client.post(URL).json()["diff"]
    changed = [r for r in diff["rows"] if r["kind"] != "equal"]
    assert changed == [
        {
            "kind": "removed",  # a line of mine alone
            "yours_number": 1,
            "yours": "fail: values",
            "reference_number": None,
            "reference": None,
        },
        {
            "kind": "changed",
            "yours_number": target + 2,
            "yours": "    m = 0  # fail: values",
            "reference_number": target + 1,
            "reference": lines[target],
        },
    ]
    equal = [r for r in diff["rows"] if r["kind"] == "equal"]
    assert len(equal) == len(lines) - 1
    assert all(r["yours"] == r["reference"] for r in equal)
    assert diff["changed_lines"] == len(changed)
    section = client.get(f"/exercises/{SLUG}/solution")
    assert section.status_code == 200 and 'id="solution-diff"' in section.text
    assert '<tr class="diff-changed">' in section.text
    assert "m = 0  # fail: values" in section.text
    assert "changed: </span>" in section.text


def test_a_review_keeps_a_revealed_solution_behind_its_button(client: TestClient) -> None:
    client = scripted(client)
    client.post(URL, json={"give_up": True})
    assert 'id="solution-code"' in client.get(f"/exercises/{SLUG}").text
    review = client.get(f"/exercises/{SLUG}", params={"review": "1"}).text
    assert 'id="solution-code"' not in review
    assert 'id="reveal-solution" aria-describedby="reveal-note" >' in review  # may open again
    assert "opening it again during a review counts as forgetting it" in review
