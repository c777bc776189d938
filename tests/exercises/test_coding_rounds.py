"""Coding rounds (app/exercises/routes/coding.py, coding_api.py): a coding interview on its own
and a
mock interview's coding round. The server's clock decides: a submission after the deadline
is refused and the round ends with its last submit; hints and the solution wait for the end;
the difficulty is hidden until then; the follow-up about the code is graded by key points."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, func, select

from app.exercises import coding_rounds
from app.models import CodingRound, Exercise, ExerciseReviewEvent, Item, Run
from app.web.templating import breakable
from sandbox.protocol import (
    Event,
    Finished,
    GradingReport,
    GradingVerdict,
    RunRequest,
    RunResult,
    Started,
    TestDone,
    TestResult,
    TestStatus,
    Verdict,
)
from tests.support.forms import csrf_token, form, sign_in, sign_up

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
DIFFICULTY_BADGE = re.compile(r"badge-(easy|medium|hard)")


class Clock:
    """The app's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now


async def grading_script(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
    """Grades as the worker would report it: code containing 'passes' passes every test."""
    assert request.grading is not None
    passing = "passes" in request.code
    tests = [
        TestResult("small inputs", "values", False, TestStatus.PASS),
        TestResult(
            "large inputs",
            "edge cases",
            True,
            TestStatus.PASS if passing else TestStatus.FAIL,
            "" if passing else "case 3: max abs error nan",
        ),
    ]
    yield Started("cpu", "Fake CPU")
    for test in tests:
        yield TestDone(test)
    verdict = GradingVerdict.PASSED if passing else GradingVerdict.FAILED
    report = GradingReport(
        verdict, 100.0 if passing else 40.0, tests, "", 5, request.grading.mode, None
    )
    yield Finished(
        RunResult(request.id, Verdict.OK, 0, "", "", 9, "cpu", "Fake CPU", grading=report)
    )


@pytest.fixture
def clock(client: TestClient) -> Clock:
    fake = Clock()
    client.app.state.backprop.clock = fake  # type: ignore[attr-defined]
    client.app.state.backprop.run_queue.script = grading_script  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return fake


def submit(client: TestClient, round_id: str, code: str, mode: str = "submit") -> str:
    answer = client.post(
        f"/api/coding-rounds/{round_id}/submissions", json={"code": code, "mode": mode}
    )
    assert answer.status_code == 202, answer.text
    run_id: str = answer.json()["id"]
    slug = client.get(f"/api/coding-rounds/{round_id}").json()["exercise"]["slug"]
    with client.stream("GET", f"/api/exercises/{slug}/submissions/{run_id}/events") as events:
        assert events.status_code == 200
        for _ in events.iter_lines():
            pass
    return run_id


def difficulty_of(engine: Engine, slug: str) -> str:
    with Session(engine) as session:
        return session.exec(select(Exercise.difficulty).where(Exercise.slug == slug)).one()


def test_a_coding_interview_hides_the_difficulty_until_its_verdict(
    client: TestClient, engine: Engine, clock: Clock
) -> None:
    for page in ("/quizzes", "/exercises"):
        assert 'action="/coding"' in client.get(page).text  # reachable from both
    started = form(client, "/coding", token_from="/quizzes", topic="regularization")
    assert started.status_code == 303
    url = started.headers["location"]
    round_id = url.rsplit("/", 1)[1]

    page = client.get(url).text
    api = client.get(f"/api/coding-rounds/{round_id}").json()
    slug = api["exercise"]["slug"]
    with Session(engine) as session:
        exercise = session.exec(select(Exercise).where(Exercise.slug == slug)).one()
    assert api["status"] == "open" and api["difficulty"] is None and api["result"] is None
    assert "difficulty" not in api["exercise"]
    assert api["seconds_left"] == 20 * 60
    # As shown: escaped, with a line-break opportunity at each joint of a long name.
    assert breakable(exercise.title) in page
    assert 'id="quiz-clock"' in page and 'data-drafts="round"' in page
    assert not DIFFICULTY_BADGE.search(page)
    assert "reveal-solution" not in page and "/solution" not in page
    assert f'data-submit-url="/api/coding-rounds/{round_id}/submissions"' in page

    clock.now += timedelta(minutes=5)
    first = submit(client, round_id, "fails")
    submit(client, round_id, "passes", mode="run")  # visible tests only: not the result
    assert client.get(f"/api/coding-rounds/{round_id}").json()["difficulty"] is None

    ended = form(client, f"/coding/{round_id}/finish", token_from=url)
    assert ended.status_code == 303
    closed = client.get(f"/api/coding-rounds/{round_id}").json()
    assert closed["status"] == "closed" and closed["difficulty"] == exercise.difficulty
    assert closed["result"] == {
        "state": "graded",
        "submission_id": first,
        "verdict": "failed",
        "score": 40.0,
        "failing_tests": [
            {
                "name": "large inputs",
                "category": "edge cases",
                "message": "case 3: max abs error nan",
            }
        ],
    }
    assert f'href="/coding/{round_id}"' in client.get("/quizzes").text  # in the history
    results = client.get(url).text
    assert f"badge-{exercise.difficulty}" in results and "Some tests failed" in results
    assert "case 3: max abs error nan" in results and f"/exercises/{slug}" in results


def test_a_submission_after_the_deadline_is_refused_and_the_last_one_stands(
    client: TestClient, engine: Engine, clock: Clock
) -> None:
    round_id = client.post("/api/coding-rounds", json={"minutes": 10}).json()["id"]
    clock.now += timedelta(minutes=9)
    last = submit(client, round_id, "passes")
    clock.now += timedelta(minutes=1, seconds=1)
    with Session(engine) as session:
        runs_before = session.exec(select(func.count()).select_from(Run)).one()
    late = client.post(
        f"/api/coding-rounds/{round_id}/submissions", json={"code": "fails", "mode": "submit"}
    )
    assert late.status_code == 409
    assert "ended at 09:10:00 UTC" in late.json()["detail"]
    assert "not graded" in late.json()["detail"]
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(Run)).one() == runs_before
        found = session.exec(select(CodingRound).where(CodingRound.id == round_id)).one()
    assert found.run_id == last and found.closed_at is not None
    assert found.closed_at.replace(tzinfo=UTC) == START + timedelta(minutes=10)
    result = client.get(f"/api/coding-rounds/{round_id}").json()["result"]
    assert result["verdict"] == "passed" and result["failing_tests"] == []
    page = client.get(f"/coding/{round_id}").text
    assert "time ran out" in page and "Every test passed" in page


def test_the_solution_waits_while_the_learners_round_on_it_runs(
    client: TestClient, engine: Engine, clock: Clock
) -> None:
    opened = client.post("/api/coding-rounds", json={"minutes": 20}).json()
    slug = opened["exercise"]["slug"]
    refused = client.post(f"/api/exercises/{slug}/solution")
    assert refused.status_code == 409 and "still running" in refused.json()["detail"]
    with Session(engine) as session:
        learner_id = session.exec(select(CodingRound.learner_id)).one()
        assert coding_rounds.is_open(session, learner_id, slug, now=clock.now)
        assert not coding_rounds.is_open(session, learner_id + 1, slug, now=clock.now)
        assert not coding_rounds.is_open(session, None, slug, now=clock.now)
        later = clock.now + timedelta(minutes=20)
        assert not coding_rounds.is_open(session, learner_id, slug, now=later)

    other = TestClient(client.app)  # another browser: its solution is not held back
    other.headers["X-CSRF-Token"] = csrf_token(other)
    assert other.post(f"/api/exercises/{slug}/solution", json={"give_up": True}).status_code == 200

    clock.now += timedelta(minutes=20)  # time is up: the solution opens
    assert client.post(f"/api/exercises/{slug}/solution", json={"give_up": True}).status_code == 200


def test_finishing_early_opens_the_solution(client: TestClient, clock: Clock) -> None:
    opened = client.post("/api/coding-rounds", json={}).json()
    slug = opened["exercise"]["slug"]
    assert client.post(f"/api/exercises/{slug}/solution").status_code == 409
    assert client.post(f"/api/coding-rounds/{opened['id']}/finish").status_code == 200
    assert client.post(f"/api/exercises/{slug}/solution", json={"give_up": True}).status_code == 200
    late = client.post(f"/api/coding-rounds/{opened['id']}/submissions", json={"code": "passes"})
    assert late.status_code == 409


def test_bad_requests_change_nothing(client: TestClient, engine: Engine, clock: Clock) -> None:
    assert client.post("/api/coding-rounds", json={"minutes": 2}).status_code == 422
    nowhere = client.post("/api/coding-rounds", json={"topic": "no-such-topic"})
    assert nowhere.status_code == 422 and "No code exercise" in nowhere.json()["detail"]
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(CodingRound)).one() == 0
    assert client.get("/api/coding-rounds/nope").status_code == 404
    opened = client.post("/api/coding-rounds", json={}).json()
    stranger = TestClient(client.app)
    assert stranger.get(f"/api/coding-rounds/{opened['id']}").status_code == 404
    assert stranger.get(f"/coding/{opened['id']}").status_code == 404
    stranger.headers["X-CSRF-Token"] = csrf_token(stranger)
    assert stranger.post(f"/api/coding-rounds/{opened['id']}/finish").status_code == 404
    taken = stranger.post(f"/api/coding-rounds/{opened['id']}/submissions", json={"code": "passes"})
    assert taken.status_code == 404
    assert client.get(f"/api/coding-rounds/{opened['id']}").json()["status"] == "open"


def test_a_mock_interview_with_a_coding_round_and_its_follow_up(
    client: TestClient, engine: Engine, clock: Clock
) -> None:
    page = client.get("/quizzes").text
    assert re.search(r'name="coding_round" value="true"[^>]*checked', page)  # on by default
    started = form(
        client,
        "/quizzes",
        token_from="/quizzes",
        mode="mock",
        count="3",
        deck="deep-learning",
        topic="regularization",
        coding_round="true",
    )
    assert started.status_code == 303, started.text
    url = started.headers["location"]
    with Session(engine) as session:
        found = session.exec(select(CodingRound)).one()
        exercise = session.exec(select(Exercise).where(Exercise.slug == found.exercise_slug)).one()
    assert found.started_at is None and found.attempt_id == url.rsplit("/", 1)[1]
    with Session(engine) as session:
        decks = session.exec(
            select(Item.deck_slug).where(col(Item.slug).in_(exercise.item_list))
        ).all()
    assert "deep-learning" in decks and exercise.topic_slug == "regularization"
    waiting = client.get(f"/api/coding-rounds/{found.id}").json()
    assert waiting["status"] == "waiting" and waiting["exercise"] is None
    assert exercise.title not in client.get(f"/coding/{found.id}").text  # not before its start
    early = form(client, f"{url}/mock/coding", token_from=url)
    assert early.status_code == 409  # the prompts come first
    for n in (1, 2, 3):
        assert form(client, f"{url}/mock/next", token_from=url, position=str(n)).status_code == 303
    waiting = client.get(url).text
    assert "Coding round" in waiting and 'id="mock-coding"' in waiting
    assert "Grade your answers" not in waiting
    not_yet = form(client, f"{url}/mock/grade", token_from=url)
    assert not_yet.status_code == 400 and "coding round" in not_yet.text

    clock.now += timedelta(minutes=3)  # the round's clock starts when the learner starts it
    begun = form(client, f"{url}/mock/coding", token_from=url)
    assert begun.status_code == 303 and begun.headers["location"] == f"/coding/{found.id}"
    round_page = client.get(f"/coding/{found.id}").text
    assert breakable(exercise.title) in round_page and not DIFFICULTY_BADGE.search(round_page)
    assert client.get(f"/api/coding-rounds/{found.id}").json()["seconds_left"] == 20 * 60
    assert "Back to the coding round" in client.get(url).text

    submit(client, found.id, "passes")
    clock.now += timedelta(minutes=21)  # time runs out: the round ends with that submit
    grading = client.get(url).text
    assert "Grade your answers" in grading and "Every test passed" in grading
    assert f"badge-{exercise.difficulty}" in grading
    followup = exercise.followup_list[found.followup_index or 0]
    assert breakable(followup["prompt"]) in grading
    assert grading.count('name="followup"') == len(followup["key_points"])

    token = csrf_token(client, url)
    data = {"csrf_token": token, "followup": ["1", "2"]}
    graded = client.post(f"{url}/mock/grade", data=data, follow_redirects=False)
    assert graded.status_code == 303
    results = client.get(url).text
    assert "Every test passed" in results and breakable(followup["prompt"]) in results
    total = len(followup["key_points"])
    assert f"you covered 2 of {total} key points" in results
    with Session(engine) as session:
        stored = session.exec(select(CodingRound)).one()
    assert stored.followup_covered == "1,2" and stored.run_id is not None
    with Session(engine) as session:
        reviews = session.exec(
            select(ExerciseReviewEvent.source).where(
                ExerciseReviewEvent.exercise_slug == exercise.slug
            )
        ).all()
    assert reviews == ["mock"]  # the round's pass, counted once, as the mock's


def test_a_mock_without_the_box_ticked_has_no_coding_round(
    client: TestClient, engine: Engine, clock: Clock
) -> None:
    started = form(
        client, "/quizzes", token_from="/quizzes", mode="mock", count="3", deck="deep-learning"
    )
    url = started.headers["location"]
    for n in (1, 2, 3):
        form(client, f"{url}/mock/next", token_from=url, position=str(n))
    assert "Grade your answers" in client.get(url).text
    timed = form(client, "/quizzes", token_from="/quizzes", mode="practice", coding_round="true")
    assert timed.status_code == 303  # the box only matters to a mock interview
    with Session(engine) as session:
        assert session.exec(select(func.count()).select_from(CodingRound)).one() == 0


def test_the_round_draws_from_the_mocks_topics_and_not_what_was_just_solved(
    client: TestClient, engine: Engine, clock: Clock
) -> None:
    with Session(engine) as session:
        pool = session.exec(
            select(Exercise.slug).where(Exercise.topic_slug == "regularization")
        ).all()
    assert len(pool) >= 2
    solved, left = pool[:-1], pool[-1]
    # Solve all but one of the topic's exercises (passing submits, through the API).
    for slug in solved:
        answer = client.post(
            f"/api/exercises/{slug}/submissions", json={"code": "passes", "mode": "submit"}
        )
        assert answer.status_code == 202
        with client.stream(
            "GET", f"/api/exercises/{slug}/submissions/{answer.json()['id']}/events"
        ) as r:
            for _ in r.iter_lines():
                pass
    drawn = set()
    for _ in range(6):
        opened = client.post("/api/coding-rounds", json={"topic": "regularization"}).json()
        drawn.add(opened["exercise"]["slug"])
        client.post(f"/api/coding-rounds/{opened['id']}/finish")
    assert drawn == {left}
    with Session(engine) as session:
        rounds = session.exec(select(func.count()).select_from(CodingRound)).one()
        assert rounds == 6
        kinds = session.exec(select(col(CodingRound.attempt_id).is_(None))).all()
        assert all(kinds)


def test_a_guests_round_follows_them_into_their_account(client: TestClient, clock: Clock) -> None:
    account = TestClient(client.app)
    sign_up(account, "rounder")  # an account with a learner of its own
    opened = client.post("/api/coding-rounds", json={}).json()  # as a guest
    assert sign_in(client, "rounder") == 303  # the guest's data merges into the account
    client.headers["X-CSRF-Token"] = csrf_token(client)
    carried = client.get(f"/api/coding-rounds/{opened['id']}")
    assert carried.status_code == 200 and carried.json()["status"] == "open"
    slug = opened["exercise"]["slug"]
    assert client.post(f"/api/exercises/{slug}/solution").status_code == 409


def test_the_export_holds_the_learners_rounds(client: TestClient, clock: Clock) -> None:
    sign_up(client, "exporter")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    opened = client.post("/api/coding-rounds", json={"minutes": 15}).json()
    run_id = submit(client, opened["id"], "passes")
    exported = client.get("/api/me/export").json()
    assert exported["coding_rounds"] == [
        {
            "id": opened["id"],
            "mock": None,
            "exercise": opened["exercise"]["slug"],
            "minutes": 15,
            "started_at": START.isoformat(),
            "deadline": (START + timedelta(minutes=15)).isoformat(),
            "closed_at": None,
            "submission": run_id,
            "followup_covered": None,
        }
    ]


def test_hints_wait_while_the_learners_round_on_it_runs(client: TestClient, clock: Clock) -> None:
    opened = client.post("/api/coding-rounds", json={"minutes": 20}).json()
    slug = opened["exercise"]["slug"]
    for refused in (
        client.post(f"/api/exercises/{slug}/hints"),
        client.get(f"/api/exercises/{slug}/hints"),
        client.get(f"/api/exercises/{slug}/solution"),
    ):
        assert refused.status_code == 409 and "still running" in refused.json()["detail"]
    clock.now += timedelta(minutes=20)  # time is up: help opens
    shown = client.post(f"/api/exercises/{slug}/hints")
    assert shown.status_code == 200 and shown.json()["hint"]["text"]


def test_a_running_round_has_the_exercise_workbench_without_help_or_a_second_device(
    client: TestClient, clock: Clock
) -> None:
    """The round page shares the exercise page's editor and results (one template, the
    script's element ids), but offers no hints, no solution and no side-by-side grading."""
    opened = client.post("/api/coding-rounds", json={"minutes": 20}).json()
    page = client.get(f"/coding/{opened['id']}").text
    assert 'id="submit-tests"' in page and 'id="grading"' in page
    for absent in ('id="both-devices"', 'id="device-compare"', 'id="hints"', "reveal-solution"):
        assert absent not in page, absent
    exercise_page = client.get(f"/exercises/{opened['exercise']['slug']}").text
    assert 'id="submit-tests"' in exercise_page
    # This server's sandbox grades on the CPU only: the toolbar says nothing of a GPU.
    toolbar = exercise_page.split('id="exercise-toolbar"', 1)[1].split("</div>", 1)[0]
    assert "GPU" not in toolbar and 'id="device-compare"' not in exercise_page
