"""The solution: refused before a failed Submit unless the learner gives up, recorded once,
shown again on reload with the reference highlighted, the editorial rendered under its own
headings and the last submission beside it. The section's words and its one button say what
is true in each state: not tried, failed, passed, revealed, in a review."""

from __future__ import annotations

import re

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


def section(client: TestClient, page: str | None = None) -> dict[str, str]:
    """The Solution section's state, its note, its button, its dialog and which of the
    dialog's buttons has the focus first, from the page (or the section alone)."""
    html = page if page is not None else client.get(f"/exercises/{SLUG}/solution").text
    found = re.search(r'<section class="solution".*?</section>', html, re.S)
    assert found, "no Solution section"
    text = found.group(0)

    def first(pattern: str) -> str:
        match = re.search(pattern, text, re.S)
        return " ".join(match.group(1).split()) if match else ""

    return {
        "state": first(r'data-state="([a-z]+)"'),
        "note": first(r'<p class="muted" id="reveal-note">(.*?)</p>'),
        "button": first(r'id="reveal-solution"[^>]*>(.*?)</button>'),
        "give_up": first(r'data-give-up="([a-z]+)"'),
        "title": first(r'<h2 id="reveal-confirm-title">(.*?)</h2>'),
        "dialog": first(r'<p id="reveal-confirm-text">(.*?)</p>'),
        "focused": first(r"<button[^>]*autofocus[^>]*>(.*?)</button>"),
        "html": text,
    }


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
    shown = section(client, client.get(f"/exercises/{SLUG}").text)
    assert shown["state"] == "passed" and 'id="solution-code"' not in shown["html"]
    assert client.post("/api/exercises/nope/solution", json={"give_up": True}).status_code == 404
    assert client.get("/exercises/nope/solution").status_code == 404


def test_after_a_failed_submit_it_comes_with_the_editorial_and_is_recorded_once(
    client: TestClient, engine: Engine
) -> None:
    client = scripted(client)
    sign_up(client, "revealer")
    client = scripted(client)
    submit(client, SLUG, "fail: gradients")
    assert section(client, client.get(f"/exercises/{SLUG}").text)["state"] == "failed"
    body = client.post(URL).json()
    assert body["code"] == (FOLDER / "reference.py").read_text()
    assert body["editorial_markdown"] == (FOLDER / "editorial.md").read_text()
    # Markdown, rendered; its ### headings sit under the section's h2, as h3.
    assert "Why it is written this way</h3>" in body["editorial_html"]
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
    assert 'id="solution-code"' in page and 'id="reveal-solution"' not in page
    assert "You submitted no code for this exercise" in page
    assert section(client, page)["state"] == "revealed"


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
    review = section(client, client.get(f"/exercises/{SLUG}", params={"review": "1"}).text)
    assert 'id="solution-code"' not in review["html"]
    assert review["state"] == "review" and review["button"] == "Give up and see the solution"
    assert review["give_up"] == "true"  # may open again
    assert "opening it again during a review counts as forgetting it" in review["note"]
    assert review["focused"] == "Keep trying"


def test_each_state_says_what_is_true_and_offers_one_button(client: TestClient) -> None:
    """Not tried: giving up is the only way in. A failed Submit: the solution is theirs to
    see. A pass (after that failure, even): a comparison, with no warning about "solved
    after reveal", which a reveal after a pass does not make it. The dialog's focus starts on
    the safe choice."""
    client = scripted(client)
    fresh = section(client, client.get(f"/exercises/{SLUG}").text)
    assert fresh["state"] == "open"
    assert fresh["button"] == "Give up and see the solution" and fresh["give_up"] == "true"
    assert "A Submit of yours failed" not in fresh["html"] and 'id="give-up"' not in fresh["html"]
    assert "counts as solved after reveal" in fresh["dialog"]
    assert fresh["focused"] == "Keep trying"
    assert fresh["html"].count("<button") == 3  # the one button, then the dialog's two

    submit(client, SLUG, "fail: values", mode="run")  # a Run is no Submit: still open
    assert section(client)["state"] == "open"

    submit(client, SLUG, "fail: values")
    failed = section(client)
    assert failed["state"] == "failed" and failed["button"] == "Show the solution"
    assert failed["note"].startswith("A Submit of yours failed")
    assert failed["give_up"] == "false" and failed["focused"] == "Keep trying"
    assert "counts as solved after reveal" in failed["dialog"]

    submit(client, SLUG, "passes")
    passed = section(client)
    assert passed["state"] == "passed" and passed["button"] == "Compare with the reference"
    assert "failed" not in passed["note"] and "solved after reveal" not in passed["html"]
    assert "Your pass stands" in passed["dialog"] and passed["focused"] == "Cancel"
    assert passed["give_up"] == "true"

    assert client.post(URL, json={"give_up": True}).status_code == 200
    shown = section(client)
    assert shown["state"] == "revealed" and shown["button"] == ""
    # The words were true: the pass came first, so it stays solved, not solved after reveal.
    listed = {e["slug"]: e["status"] for e in client.get("/api/exercises").json()}
    assert listed[SLUG] == "solved"


def test_the_revealed_reference_is_highlighted_with_a_copy_button(client: TestClient) -> None:
    client = scripted(client)
    client.post(URL, json={"give_up": True})
    shown = section(client)["html"]
    code = re.search(r'<code id="solution-code"[^>]*>(.*?)</code>', shown, re.S)
    assert code and '<span class="k">def</span>' in code.group(1)  # Pygments' token classes
    assert '<pre class="hl solution-code" tabindex="0">' in shown
    assert 'id="copy-solution"' in shown and 'id="copy-solution-status" role="status"' in shown
    # One heading for the editorial's first section: its own, not the template's as well.
    assert shown.count("Why it is written this way") == 1
    assert re.search(r'<h3 id="h-why-it-is-written-this-way">', shown)
