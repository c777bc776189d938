"""Submissions through the app with scripted runs: the run request carries the grading
payload read from the content folder, test events stream as they come, the graded result is
stored and read back, owned and limited as runs are; bad input changes nothing. The real
grader is driven in tests/sandbox/test_exercise_submissions.py."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from app.models import Run
from app.settings import PROJECT_ROOT
from sandbox.protocol import (
    Event,
    Finished,
    GradingReport,
    GradingVerdict,
    Mode,
    Output,
    RunRequest,
    RunResult,
    Started,
    TestDone,
    TestResult,
    TestStatus,
    Verdict,
)
from tests.support.forms import csrf_token
from tests.support.runs import sse_frames

SLUG = "stable-softmax"
FOLDER = PROJECT_ROOT / "content" / "exercises" / SLUG
URL = f"/api/exercises/{SLUG}/submissions"


# A failing visible test's case as the grader sends it (sandbox/grading/cases.py).
FAILING_CASE = {
    "seed": 12,
    "inputs": [{"name": "x", "kind": "tensor", "shape": [1, 2], "dtype": "float32",
                "full": True, "text": "[[900, 1000]]", "min": 900.0, "max": 1000.0,
                "nan": 0, "inf": 0}],
    "compared": "output",
    "output": {"kind": "tensor", "shape": [1, 2], "dtype": "float32", "full": True,
               "text": "[[nan, nan]]", "nan": 2, "inf": 0},
    "expected": {"kind": "tensor", "shape": [1, 2], "dtype": "float32", "full": True,
                 "text": "[[0, 1]]", "min": 0.0, "max": 1.0, "nan": 0, "inf": 0},
    "difference": {"abs": "inf", "where": "output[0, 0]", "index": [0, 0], "path": "output",
                   "expected": 0.0, "got": "nan"},
    "snippet": "import torch\nprint(softmax(torch.tensor([[900.0, 1000.0]]), dim=-1))\n",
}  # fmt: skip


async def grading_script(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
    """Grades as the worker would report it: 'passes' in the code passes every test."""
    assert request.grading is not None
    passing = "passes" in request.code
    tests = [
        TestResult("softmax of small rows", "values", False, TestStatus.PASS),
        TestResult(
            "softmax of huge logits",
            "edge cases",
            False,
            TestStatus.PASS if passing else TestStatus.FAIL,
            "" if passing else "case 0: max abs error nan",
            case=None if passing else FAILING_CASE,
        ),
    ]
    if request.grading.mode is Mode.SUBMIT:
        tests.append(TestResult("rows hundreds apart", "edge cases", True, TestStatus.PASS))
    yield Started("cpu", "Fake CPU")
    for test in tests:
        yield TestDone(test)
    yield Output("stdout", "hello from the learner\n")
    verdict = GradingVerdict.PASSED if passing else GradingVerdict.FAILED
    report = GradingReport(
        verdict, 100.0 if passing else 60.0, tests, "", 7, request.grading.mode, None
    )
    yield Finished(
        RunResult(
            request.id,
            Verdict.OK,
            0,
            "hello from the learner\n",
            "",
            12,
            "cpu",
            "Fake CPU",
            grading=report,
        )
    )


def browser(client: TestClient) -> TestClient:
    client.app.state.backprop.run_queue.script = grading_script  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return client


def follow(client: TestClient, url: str, **kwargs: object) -> list[tuple[str, object]]:
    with client.stream("GET", url, **kwargs) as response:  # type: ignore[arg-type]
        assert response.status_code == 200
        return [(kind, data) for _, kind, data in sse_frames(response.iter_lines())]


def test_a_run_streams_test_results_and_stores_the_grading(
    client: TestClient, engine: Engine
) -> None:
    client = browser(client)
    answer = client.post(URL, json={"code": "def softmax(x, dim): ...", "mode": "run"})
    assert answer.status_code == 202
    accepted = answer.json()
    assert accepted["token"] is None  # a browser owns it by its learner
    request = client.app.state.backprop.run_queue.submitted[-1]  # type: ignore[attr-defined]
    assert request.grading.slug == SLUG and request.grading.mode is Mode.RUN
    assert request.grading.reference == (FOLDER / "reference.py").read_text()
    assert request.grading.tests == (FOLDER / "tests.py").read_text()
    assert request.grading.config["entry_point"] == "softmax"

    events = follow(client, f"{URL}/{accepted['id']}/events")
    tests = [data["test"] for kind, data in events if kind == "test"]  # type: ignore[index]
    assert [t["name"] for t in tests] == ["softmax of small rows", "softmax of huge logits"]
    assert tests[1]["case"] == FAILING_CASE and "case" not in tests[0]  # as the grader sent it
    kind, result = events[-1]
    assert kind == "result"
    assert result["verdict"] == "failed" and result["score"] == 60.0  # type: ignore[index]
    assert result["mode"] == "run" and result["output"] == "hello from the learner\n"  # type: ignore[index]

    stored = client.get(f"{URL}/{accepted['id']}").json()
    assert stored == result
    assert stored["tests"][1] == {
        "name": "softmax of huge logits",
        "category": "edge cases",
        "hidden": False,
        "status": "fail",
        "message": "case 0: max abs error nan",
        "case": FAILING_CASE,
    }
    assert stored["tests"][0]["case"] is None  # a pass has none
    with Session(engine) as session:
        run = session.exec(select(Run).where(Run.id == accepted["id"])).one()
    assert run.exercise_slug == SLUG and run.grading_mode == "run"
    assert run.grading_verdict == "failed" and run.code == "def softmax(x, dim): ..."
    listed = {e["slug"]: e["status"] for e in client.get("/api/exercises").json()}
    assert listed[SLUG] == "attempted"


def test_a_passing_submit_solves_the_exercise_and_is_exported(client: TestClient) -> None:
    client = browser(client)
    from tests.support.forms import sign_up

    sign_up(client, "solver")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    accepted = client.post(URL, json={"code": "passes", "mode": "submit"}).json()
    result = follow(client, f"{URL}/{accepted['id']}/events")[-1][1]
    assert result["verdict"] == "passed" and result["score"] == 100.0  # type: ignore[index]
    assert any(t["hidden"] for t in result["tests"])  # type: ignore[index]
    solved = client.get("/api/exercises", params={"status": "solved"}).json()
    assert [e["slug"] for e in solved] == [SLUG]
    exported = client.get("/api/me/export").json()
    submission = next(r for r in exported["runs"] if r["id"] == accepted["id"])
    assert submission["exercise"] == SLUG and submission["mode"] == "submit"
    assert submission["code"] == "passes" and submission["grading"]["verdict"] == "passed"


def test_a_cookie_less_client_owns_its_submission_by_token(client: TestClient) -> None:
    client.app.state.backprop.run_queue.script = grading_script  # type: ignore[attr-defined]
    program = client  # no cookies, no bearer token
    accepted = program.post(URL, json={"code": "passes"}).json()
    assert accepted["token"]
    url = f"{URL}/{accepted['id']}"
    assert program.get(url).status_code == 404  # no token, no submission
    headers = {"X-Run-Token": accepted["token"]}
    events = follow(program, f"{url}/events", headers=headers)
    assert events[-1][1]["verdict"] == "passed"  # type: ignore[index]
    assert program.get(url, headers=headers).json()["verdict"] == "passed"
    # Another exercise's address for it finds nothing.
    elsewhere = f"/api/exercises/gelu-autograd-function/submissions/{accepted['id']}"
    assert program.get(elsewhere, headers=headers).status_code == 404


def test_bad_submissions_are_refused_and_store_nothing(client: TestClient, engine: Engine) -> None:
    client = browser(client)
    assert client.post(URL, json={"code": "x", "mode": "grade"}).status_code == 422
    assert client.post(URL, json={"code": "x", "backend": "tpu"}).status_code == 422
    assert client.post(URL, json={"mode": "run"}).status_code == 422
    big = client.post(URL, json={"code": "#" * (64 * 1024 + 1)})
    assert big.status_code == 400 and "64 KiB" in big.json()["detail"]
    missing = client.post("/api/exercises/no-such/submissions", json={"code": "x"})
    assert missing.status_code == 404
    with Session(engine) as session:
        assert session.exec(select(Run)).all() == []


def test_the_same_idempotency_key_answers_with_the_same_submission(client: TestClient) -> None:
    client = browser(client)
    headers = {"Idempotency-Key": "sub-1"}
    first = client.post(URL, json={"code": "passes", "mode": "run"}, headers=headers).json()
    again = client.post(URL, json={"code": "passes", "mode": "run"}, headers=headers).json()
    assert again["id"] == first["id"]
    other = client.post(URL, json={"code": "passes", "mode": "submit"}, headers=headers)
    assert other.status_code == 422


# Both devices, side by side


def _tolerance(backend: str) -> str:
    return "atol 0.0001 + rtol 0.001" if backend == "cuda" else "atol 1e-05 + rtol 0.0001"


async def device_script(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
    """Grades as a worker with a GPU would: the CPU passes, the GPU fails one test (a kernel
    that differs past the GPU's tolerance), each with its own timing against the reference."""
    assert request.grading is not None
    backend = request.backend.value
    device = "Fake H100" if backend == "cuda" else "Fake CPU"
    status = TestStatus.FAIL if backend == "cuda" else TestStatus.PASS
    tests = [TestResult("softmax of small rows", "values", False, status, "max abs error 0.1")]
    yield Started(backend, device)
    yield TestDone(tests[0])
    verdict = GradingVerdict.FAILED if backend == "cuda" else GradingVerdict.PASSED
    performance = {
        "ratio": 1.5 if backend == "cuda" else 1.1,
        "learner": {"median_ms": 3.0 if backend == "cuda" else 11.0},
        "reference": {"median_ms": 2.0 if backend == "cuda" else 10.0},
    }
    report = GradingReport(
        verdict,
        0.0 if backend == "cuda" else 100.0,
        tests,
        "",
        7,
        request.grading.mode,
        performance,
        {"float32": _tolerance(backend)},
    )
    result = RunResult(request.id, Verdict.OK, 0, "", "", 5, backend, device, grading=report)
    yield Finished(result)


def test_both_devices_grade_the_same_code_side_by_side(client: TestClient) -> None:
    client = browser(client)
    queue = client.app.state.backprop.run_queue  # type: ignore[attr-defined]
    queue.gpu, queue.script = "Fake H100", device_script
    answer = client.post(URL, json={"code": "x = 1", "backend": "both"})
    assert answer.status_code == 202
    accepted = answer.json()
    assert accepted["paired"] is not None and accepted["absent"] == {}
    assert [r.backend.value for r in queue.submitted[-2:]] == ["cpu", "cuda"]
    rows = {}
    for run_id in (accepted["id"], accepted["paired"]["id"]):
        result = follow(client, f"{URL}/{run_id}/events")[-1][1]
        rows[result["backend"]] = result  # type: ignore[index]
    assert rows["cpu"]["verdict"] == "passed" and rows["cuda"]["verdict"] == "failed"
    assert rows["cpu"]["tolerances"] == {"float32": _tolerance("cpu")}
    assert rows["cuda"]["tolerances"] == {"float32": _tolerance("cuda")}
    assert rows["cuda"]["performance"] == {"ratio": 1.5, "learner_ms": 3.0, "reference_ms": 2.0}
    assert rows["cpu"]["device"] == "Fake CPU" and rows["cuda"]["device"] == "Fake H100"


def test_both_devices_without_a_gpu_grades_on_the_cpu_and_says_why(client: TestClient) -> None:
    client = browser(client)
    answer = client.post(URL, json={"code": "passes", "backend": "both"})
    assert answer.status_code == 202
    accepted = answer.json()
    assert accepted["paired"] is None
    assert accepted["absent"] == {"cuda": "Scripted runs have no GPU."}
    request = client.app.state.backprop.run_queue.submitted[-1]  # type: ignore[attr-defined]
    assert request.backend.value == "cpu"


def test_a_retried_pair_gives_the_same_two_submissions(client: TestClient) -> None:
    client = browser(client)
    client.app.state.backprop.run_queue.gpu = "Fake H100"  # type: ignore[attr-defined]
    headers = {"Idempotency-Key": "pair-1"}
    body = {"code": "passes", "backend": "both"}
    first = client.post(URL, json=body, headers=headers).json()
    again = client.post(URL, json=body, headers=headers).json()
    assert (again["id"], again["paired"]["id"]) == (first["id"], first["paired"]["id"])
    assert first["id"] != first["paired"]["id"]
