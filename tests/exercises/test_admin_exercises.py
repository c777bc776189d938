"""Authoring insight on the code exercises (app/exercises/routes/admin_exercises.py)
for admins only:
the sortable table with its flag, the same figures as JSON, and any submission the flag
names; everyone else is refused."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session

from app.accounts import accounts
from app.cli import main as cli
from tests.support.forms import sign_up
from tests.support.paths import EXERCISE_COUNT
from tests.support.submissions import FIXED, REFORMATTED, add_submission

SLUG, OTHER = "stable-softmax", "clip-grad-norm"
HUGE = "softmax of huge logits"


def signed_in_admin(client: TestClient, engine: Engine) -> None:
    sign_up(client, "author")
    with Session(engine) as session:
        accounts.set_admin(session, username="author", admin=True)
        session.commit()


def seed(engine: Engine) -> tuple[str, str]:
    """stable-softmax: alice's same program failed then passed a hidden test (a flag); bob
    fixed his code. clip-grad-norm: two people, nobody solved it."""
    with Session(engine) as session:
        failed = add_submission(session, slug=SLUG, visitor="alice", minutes=0, failing=(HUGE,))
        passed = add_submission(session, slug=SLUG, visitor="alice", minutes=3, code=REFORMATTED)
        add_submission(session, slug=SLUG, visitor="bob", minutes=0, failing=(HUGE,))
        add_submission(session, slug=SLUG, visitor="bob", minutes=1, code=FIXED)
        for visitor in ("carol", "dave", "erin"):
            add_submission(session, slug=OTHER, visitor=visitor, minutes=0, failing=(HUGE,))
        session.commit()
    return failed, passed


def rows(html: str) -> list[str]:
    """The exercise slugs of the table's rows, in order."""
    body = html.split("<tbody>", 1)[1]
    return re.findall(r'<tr[^>]*>\s*<td><a href="/exercises/([a-z0-9-]+)">', body)


def test_only_admins_see_exercise_insight(client: TestClient, engine: Engine) -> None:
    assert client.get("/admin/exercises", follow_redirects=False).status_code == 303  # sign in
    assert client.get("/api/admin/exercises").status_code == 401
    sign_up(client, "learner")
    for path in ("/admin/exercises", "/api/admin/exercises", "/admin/submissions/r1"):
        refused = client.get(path)
        assert refused.status_code == 403 and "backprop admin grant" in refused.text, path


def test_before_any_submission_the_page_says_so(client: TestClient, engine: Engine) -> None:
    signed_in_admin(client, engine)
    page = client.get("/admin/exercises")
    assert page.status_code == 200
    assert "Nobody has submitted to an exercise yet." in page.text
    assert "<table" not in page.text


def test_the_table_shows_figures_and_flags_the_flaky_test(
    client: TestClient, engine: Engine
) -> None:
    failed, passed = seed(engine)
    signed_in_admin(client, engine)
    page = client.get("/admin/exercises")
    assert page.status_code == 200
    html = page.text
    in_order = [e["slug"] for e in client.get("/api/exercises").json()]  # the set's order
    assert rows(html) == in_order and len(in_order) == EXERCISE_COUNT
    softmax = html.split('href="/exercises/stable-softmax"', 1)[1].split("</tr>", 1)[0]
    assert '<td class="num">2</td>' in softmax  # tried
    assert '100% <span class="muted">(2/2)</span>' in softmax
    assert "flaky or wrong test" in softmax and "1 case" in softmax
    assert f'href="/admin/submissions/{failed}"' in softmax
    assert f'href="/admin/submissions/{passed}"' in softmax
    other = html.split('href="/exercises/clip-grad-norm"', 1)[1].split("</tr>", 1)[0]
    assert '0% <span class="muted">(0/3)</span>' in other and "flaky" not in other
    assert '<th scope="col" class="num" aria-sort' not in html  # sorted by exercise


def test_the_table_sorts_by_a_column_and_refuses_an_unknown_one(
    client: TestClient, engine: Engine
) -> None:
    seed(engine)
    signed_in_admin(client, engine)
    by_tried = client.get("/admin/exercises?sort=tried")
    assert rows(by_tried.text)[:2] == [OTHER, SLUG]  # largest first: 3 people, then 2
    assert 'aria-sort="descending"' in by_tried.text
    assert 'href="/admin/exercises?sort=tried&amp;order=asc"' in by_tried.text  # toggles
    by_rate = rows(client.get("/admin/exercises?sort=solve_rate&order=asc").text)
    # 0% before 100%, and exercises nobody submitted to last, in the set's order.
    in_set_order = [e["slug"] for e in client.get("/api/exercises").json()]
    untried = [slug for slug in in_set_order if slug not in (OTHER, SLUG)]
    assert by_rate[:2] == [OTHER, SLUG] and by_rate[2:] == untried
    assert rows(client.get("/admin/exercises?sort=flag").text)[0] == SLUG
    refused = client.get("/admin/exercises?sort=password")
    assert refused.status_code == 422 and "sort" in refused.text
    assert client.get("/admin/exercises?order=up").status_code == 422


def test_the_json_gives_the_same_figures(client: TestClient, engine: Engine) -> None:
    failed, passed = seed(engine)
    signed_in_admin(client, engine)
    answer = client.get("/api/admin/exercises")
    assert answer.status_code == 200
    by_slug = {e["slug"]: e for e in answer.json()}
    assert len(by_slug) == EXERCISE_COUNT
    softmax = by_slug[SLUG]
    assert (softmax["tried"], softmax["submitted"], softmax["solved"]) == (2, 2, 2)
    assert softmax["solve_rate"] == 1.0
    assert softmax["median_submits_to_solve"] == 2
    assert softmax["median_seconds_to_solve"] == (180 + 60) / 2
    assert softmax["failing_tests"][0] == {
        "name": HUGE,
        "category": "edge cases",
        "hidden": True,
        "failing": 2,
        "graded": 4,
        "share": 0.5,
    }
    assert softmax["flagged"] and softmax["flaky_tests"] == [HUGE]
    assert softmax["flaky_cases"] == [{"failed_run": failed, "passed_run": passed, "tests": [HUGE]}]
    assert by_slug[OTHER]["solve_rate"] == 0 and not by_slug[OTHER]["flagged"]
    assert by_slug["lora-linear"]["solve_rate"] is None


def test_a_flagged_submission_shows_its_code_and_tests(client: TestClient, engine: Engine) -> None:
    failed, _ = seed(engine)
    signed_in_admin(client, engine)
    page = client.get(f"/admin/submissions/{failed}")
    assert page.status_code == 200
    assert "def softmax(x, dim=-1):" in page.text
    assert f"<td>{HUGE}</td><td>edge cases</td><td>yes</td><td>fail</td>" in page.text
    missing = client.get("/admin/submissions/nothing-here")
    assert missing.status_code == 404 and "nothing-here" in missing.text
    assert client.get("/admin/submissions/" + "x" * 40).status_code == 422


def test_the_command_prints_a_line_per_exercise(
    engine: Engine,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seed(engine)
    monkeypatch.setenv("DATABASE_URL", database_url)
    assert cli(["exercise-stats"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == [
        "exercise", "tried", "solved", "rate", "submits", "minutes", "hints", "reveals", "flag"
    ]  # fmt: skip
    assert len(lines) == 1 + EXERCISE_COUNT
    softmax = next(line for line in lines if line.startswith(SLUG))
    assert softmax.split() == [
        SLUG,
        "2",
        "2/2",
        "100%",
        "2",
        "2.0",
        "0",
        "0",
        "1",
        "case:",
        *HUGE.split(),
    ]
    other = next(line for line in lines if line.startswith(OTHER))
    assert other.split() == [OTHER, "3", "0/3", "0%", "-", "-", "0", "0"]
