"""GET /metrics: request latency by route template, run verdicts and durations, quiz
submissions, and the runs queued and running read from the database at scrape time."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient
from sqlalchemy import Engine

from tests.support.bank import add_bank
from tests.support.forms import csrf_token
from tests.support.runs import events_of


def _value(text: str, name: str, **labels: str) -> float:
    """One sample's value; 0 when the series is not there yet."""
    for line in text.splitlines():
        match = re.match(rf"{re.escape(name)}\{{(.*)\}} (\S+)$", line)
        if match and all(f'{k}="{v}"' in match.group(1) for k, v in labels.items()):
            return float(match.group(2))
    return 0.0


def test_requests_are_timed_by_route_template_not_by_path(client: TestClient) -> None:
    client.get("/items/dropout")
    client.get("/items/batch-normalization")
    page = client.get("/metrics")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    text = page.text
    count = _value(
        text,
        "backprop_http_request_duration_seconds_count",
        method="GET",
        route="/items/{slug}",
        status="2xx",
    )
    assert count >= 2
    assert "/items/dropout" not in text, "one series per route, not per item"


def test_run_verdicts_durations_and_unfinished_runs_are_counted(client: TestClient) -> None:
    before = _value(client.get("/metrics").text, "backprop_run_verdicts_total", verdict="ok")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    body = {"code": "print('x')", "backend": "cpu"}
    run_id = client.post("/api/runs", json=body).json()["id"]
    assert events_of(client, run_id)[-1][1]["verdict"] == "ok"
    text = client.get("/metrics").text
    assert _value(text, "backprop_run_verdicts_total", verdict="ok") == before + 1
    assert 'backprop_runs{status="queued"}' in text and 'backprop_runs{status="running"}' in text
    assert "backprop_run_duration_seconds_bucket" in text
    assert 'backprop_sandbox_pool_up{backend="cpu"} 1.0' in text
    assert 'backprop_pool_workers{pool="cpu"} 1.0' in text  # one machine: its one worker


def test_quiz_submissions_are_counted_by_mode(client: TestClient, engine: Engine) -> None:
    add_bank(engine, deck="torch-compile")
    client.headers["X-CSRF-Token"] = csrf_token(client)
    before = _value(client.get("/metrics").text, "backprop_quiz_submissions_total", mode="timed")
    body = {"deck": "torch-compile", "count": 5, "seconds": 300, "mode": "timed"}
    quiz = client.post("/api/quizzes", json=body).json()
    assert client.post(f"/api/quizzes/{quiz['id']}/submit").status_code == 200
    assert client.post(f"/api/quizzes/{quiz['id']}/submit").status_code == 200  # twice: once
    after = _value(client.get("/metrics").text, "backprop_quiz_submissions_total", mode="timed")
    assert after == before + 1
