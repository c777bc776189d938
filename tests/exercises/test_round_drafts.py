"""A coding round never loses its code (app/exercises/round_drafts.py): the editor's code is
kept as the round's draft as the learner types and comes back on a reload; code left
unsubmitted when the round ends (its time runs out, or "I'm done") is graded once as its
last submission; a draft sent long after the end is refused and changes nothing."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from app.models import CodingRound, Run
from tests.exercises.test_coding_rounds import Clock, grading_script, submit
from tests.support.forms import csrf_token


@pytest.fixture
def round_clock(client: TestClient) -> Clock:
    """The app's clock, moved by the test, and a sandbox that grades code saying 'passes'
    as passing (test_coding_rounds.grading_script)."""
    fake = Clock()
    client.app.state.backprop.clock = fake  # type: ignore[attr-defined]
    client.app.state.backprop.run_queue.script = grading_script  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return fake


DRAFT = re.compile(r'<script type="application/json" id="exercise-draft">(.*?)</script>')


def start(client: TestClient) -> str:
    opened = client.post("/api/coding-rounds", json={"minutes": 20})
    assert opened.status_code == 201, opened.text
    return str(opened.json()["id"])


def keep(client: TestClient, round_id: str, code: str) -> int:
    return client.post(f"/coding/{round_id}/draft", data={"code": code}).status_code


def wait_for_grading(client: TestClient, engine: Engine, round_id: str) -> Run:
    """Follow the round's graded run to its end, as the page's stream would."""
    with Session(engine) as session:
        found = session.get(CodingRound, round_id)
        assert found is not None and found.run_id is not None
        run_id, slug = found.run_id, found.exercise_slug
    with client.stream("GET", f"/api/exercises/{slug}/submissions/{run_id}/events") as events:
        for _ in events.iter_lines():
            pass
    with Session(engine) as session:
        run = session.get(Run, run_id)
        assert run is not None
        return run


def runs_of(engine: Engine) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(Run)).one()


def test_the_code_typed_in_a_round_comes_back_after_a_reload(
    client: TestClient, round_clock: Clock
) -> None:
    round_id = start(client)
    assert DRAFT.search(client.get(f"/coding/{round_id}").text) is None  # the starter
    assert keep(client, round_id, "def f():\n    return '<b>'  # typed\n") == 204
    restored = DRAFT.search(client.get(f"/coding/{round_id}").text)
    assert restored is not None
    assert json.loads(restored.group(1)) == "def f():\n    return '<b>'  # typed\n"


def test_code_left_unsubmitted_when_time_runs_out_is_graded_once(
    client: TestClient, engine: Engine, round_clock: Clock
) -> None:
    round_id = start(client)
    assert keep(client, round_id, "# passes, never submitted") == 204
    before = runs_of(engine)
    round_clock.now += timedelta(minutes=20, seconds=1)  # the tab was closed before zero

    page = client.get(f"/coding/{round_id}").text
    assert "time ran out" in page
    assert "Nothing was submitted" not in page
    run = wait_for_grading(client, engine, round_id)
    assert run.code == "# passes, never submitted" and run.grading_mode == "submit"
    verdict = client.get(f"/coding/{round_id}/verdict").text
    assert "Every test passed" in verdict and "submitted for you" in verdict
    assert f'href="/exercises/{run.exercise_slug}#solution"' in verdict
    api = client.get(f"/api/coding-rounds/{round_id}").json()
    assert api["result"]["verdict"] == "passed"
    # Asked again (two tabs, a reload): still one grading of the leftover.
    client.get(f"/coding/{round_id}")
    client.get(f"/coding/{round_id}/verdict")
    assert runs_of(engine) == before + 1


def test_the_end_of_the_clock_sends_the_editors_code_with_the_finish(
    client: TestClient, engine: Engine, round_clock: Clock
) -> None:
    """At zero the page posts the finish form with the editor's code: a few seconds late
    over the network, it is still the round's code, and it is graded."""
    round_id = start(client)
    assert keep(client, round_id, "# fails: saved while typing") == 204
    round_clock.now += timedelta(minutes=20, seconds=3)
    ended = client.post(
        f"/coding/{round_id}/finish",
        data={"code": "# passes: typed in the last second"},
        follow_redirects=False,
    )
    assert ended.status_code == 303
    client.get(ended.headers["location"])
    run = wait_for_grading(client, engine, round_id)
    assert run.code == "# passes: typed in the last second"
    assert run.grading_verdict == "passed"


def test_a_submitted_round_is_not_graded_again(
    client: TestClient, engine: Engine, round_clock: Clock
) -> None:
    round_id = start(client)
    assert keep(client, round_id, "# passes") == 204
    submitted = submit(client, round_id, "# passes")
    before = runs_of(engine)
    ended = client.post(
        f"/coding/{round_id}/finish", data={"code": "# passes"}, follow_redirects=False
    )
    assert ended.status_code == 303
    assert "Every test passed" in client.get(f"/coding/{round_id}").text
    assert runs_of(engine) == before
    with Session(engine) as session:
        found = session.get(CodingRound, round_id)
        assert found is not None and found.run_id == submitted


def test_a_draft_sent_long_after_the_end_is_refused_and_changes_nothing(
    client: TestClient, engine: Engine, round_clock: Clock
) -> None:
    round_id = start(client)
    assert keep(client, round_id, "# kept") == 204
    round_clock.now += timedelta(minutes=20, seconds=11)
    late = client.post(f"/coding/{round_id}/draft", data={"code": "# typed after the end"})
    assert late.status_code == 409 and "can no longer change" in late.text
    with Session(engine) as session:
        found = session.get(CodingRound, round_id)
        assert found is not None and found.draft_code == "# kept"
    # A finish that long after keeps the code saved while typing.
    client.post(f"/coding/{round_id}/finish", data={"code": "# typed after the end"})
    assert wait_for_grading(client, engine, round_id).code == "# kept"


def test_a_round_draft_is_the_learners_own_and_bounded(
    client: TestClient, engine: Engine, round_clock: Clock
) -> None:
    round_id = start(client)
    too_long = client.post(f"/coding/{round_id}/draft", data={"code": "x" * 100_001})
    assert too_long.status_code in (400, 413, 422)
    stranger = TestClient(client.app)
    assert stranger.post(f"/coding/{round_id}/draft", data={"code": "# mine"}).status_code in (
        403,
        404,
    )
    with Session(engine) as session:
        assert (
            session.exec(
                select(func.count())
                .select_from(CodingRound)
                .where(col(CodingRound.draft_code).is_not(None))
            ).one()
            == 0
        )


def test_the_same_code_sent_by_a_form_is_not_graded_again(
    client: TestClient, engine: Engine, round_clock: Clock
) -> None:
    """A browser sends a form's text with CRLF line breaks, the editor's JSON with LF: the
    code a finish carries is the submitted code all the same, and is not graded twice."""
    round_id = start(client)
    submitted = submit(client, round_id, "x = 1\n# passes")
    before = runs_of(engine)
    ended = client.post(
        f"/coding/{round_id}/finish", data={"code": "x = 1\r\n# passes"}, follow_redirects=False
    )
    assert ended.status_code == 303
    page = client.get(f"/coding/{round_id}").text
    assert "Every test passed" in page and "submitted for you" not in page
    assert runs_of(engine) == before
    assert keep(client, round_id, "x = 1\r\n# passes") == 204  # a late save, within the grace
    with Session(engine) as session:
        found = session.get(CodingRound, round_id)
        assert found is not None and found.run_id == submitted
        assert found.draft_code == "x = 1\n# passes"
