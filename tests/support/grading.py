"""Submissions graded by a scripted grader: the code says what fails. Each line
`fail: <category>` fails that category's test; anything else passes every test. A browser
client (cookies, CSRF header) submits and follows the submission to its end."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fastapi.testclient import TestClient

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
from tests.support.forms import csrf_token
from tests.support.runs import sse_frames

CATEGORIES = ("values", "gradients", "edge cases", "properties")


def failing_of(code: str) -> set[str]:
    return {line.split(":", 1)[1].strip() for line in code.splitlines() if line.startswith("fail:")}


async def grade_by_code(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
    assert request.grading is not None
    failing = failing_of(request.code)
    tests = [
        TestResult(
            f"{category} test",
            category,
            False,
            TestStatus.FAIL if category in failing else TestStatus.PASS,
            "wrong" if category in failing else "",
        )
        for category in CATEGORIES
    ]
    yield Started("cpu", "Fake CPU")
    for test in tests:
        yield TestDone(test)
    passed = not failing
    verdict = GradingVerdict.PASSED if passed else GradingVerdict.FAILED
    score = 100.0 if passed else 50.0
    report = GradingReport(verdict, score, tests, "", 7, request.grading.mode, None)
    yield Finished(
        RunResult(request.id, Verdict.OK, 0, "", "", 12, "cpu", "Fake CPU", grading=report)
    )


def scripted(client: TestClient) -> TestClient:
    """The client's app grades by `grade_by_code`; the client sends the CSRF header."""
    client.app.state.backprop.run_queue.script = grade_by_code  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    return client


def submit(client: TestClient, slug: str, code: str, mode: str = "submit") -> dict[str, Any]:
    """Submit `code` and follow it to its result (the stored submission)."""
    url = f"/api/exercises/{slug}/submissions"
    accepted = client.post(url, json={"code": code, "mode": mode})
    assert accepted.status_code == 202, accepted.text
    run_id = accepted.json()["id"]
    with client.stream("GET", f"{url}/{run_id}/events") as response:
        assert response.status_code == 200
        frames = [(kind, data) for _, kind, data in sse_frames(response.iter_lines())]
    kind, result = frames[-1]
    assert kind == "result"
    assert isinstance(result, dict)
    return result
