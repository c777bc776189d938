"""Timing labs through the app: a lab run's result lines are kept (only from the lab's own
code), shown per device with a chart and a receipt, and linked from the items whose claims
the lab times. The runs here are scripted; tests/sandbox runs the real harness."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from fastapi.testclient import TestClient

from sandbox.protocol import Event, Finished, Output, RunRequest, RunResult, Started, Verdict
from tests.support.forms import csrf_token
from tests.support.runs import events_of

DEVICE = "Test CPU (2 cores)"


def result_line(label: str, eager: float, compiled: float, spread: float = 0.0) -> str:
    """A lab's result line; its rounds spread by ±`spread` of each median."""
    rounds = [1 - spread, 1 - spread / 2, 1.0, 1 + spread, 1 + 2 * spread]
    data: dict[str, Any] = {
        "label": label,
        "mode": "default",
        "eager": {
            "median_ms": eager,
            "iqr_ms": 0.1,
            "spread": 0.02,
            "rounds_ms": [eager * r for r in rounds],
        },
        "compiled": {
            "median_ms": compiled,
            "iqr_ms": 0.1,
            "spread": 0.02,
            "rounds_ms": [compiled * r for r in rounds],
        },
        "compile_seconds": 4.2,
        "speedup": eager / compiled,
        "verdict": "faster",
        "verdict_text": f"Compiled ran {eager / compiled:.2f}x faster.",
        "correct": True,
        "max_abs_diff": 0.0,
        "tolerance": 1e-4,
        "receipt": {"device": DEVICE, "torch": "2.x", "threads": 2, "date": "2026-11-23"},
    }
    return "BACKPROP_LAB_RESULT " + json.dumps(data)


async def lab_script(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
    stdout = "timing eager, round 1/5\n" + result_line("MLP, batch 256", 10.0, 5.0) + "\n"
    yield Started("cpu", DEVICE)
    yield Output("stdout", stdout)
    yield Finished(RunResult(request.id, Verdict.OK, 0, stdout, "", 9000, "cpu", DEVICE))


def run_lab(client: TestClient, code: str) -> None:
    started = client.post(
        "/api/runs", json={"code": code, "item": "lab-mlp-item-26", "sample": 1}
    ).json()
    assert events_of(client, started["id"])[-1][1]["verdict"] == "ok"


def test_a_lab_run_is_kept_and_shown_with_its_chart_and_receipt(client: TestClient) -> None:
    client.app.state.backprop.run_queue.script = lab_script  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    page = client.get("/items/lab-mlp-item-26").text
    assert "No measurement kept yet." in page
    code = client.get("/api/items/lab-mlp-item-26").json()["code_samples"][0]["code"]
    run_lab(client, code + "\n# edited")  # an edited lab: shown in its output, never kept
    assert "No measurement kept yet." in client.get("/items/lab-mlp-item-26").text
    run_lab(client, code)
    page = client.get("/items/lab-mlp-item-26").text
    assert "Measured on this server" in page and DEVICE in page
    assert 'class="lab-chart"' in page and "2.00×" in page and "Receipt" in page
    assert "No GPU measurement is kept" in page
    claim = client.get("/items/torch-compile").text  # item 26, which promises 10-50%
    assert "Measured here, not promised" in claim and "Compiled ran 2.00x faster." in claim


def test_a_bars_value_label_sits_past_its_spread_line(client: TestClient) -> None:
    async def spread_script(request: RunRequest, cancel: asyncio.Event) -> AsyncIterator[Event]:
        stdout = result_line("MLP, batch 256", 10.0, 5.0, spread=0.4) + "\n"
        yield Started("cpu", DEVICE)
        yield Output("stdout", stdout)
        yield Finished(RunResult(request.id, Verdict.OK, 0, stdout, "", 9000, "cpu", DEVICE))

    client.app.state.backprop.run_queue.script = spread_script  # type: ignore[attr-defined]
    client.headers["X-CSRF-Token"] = csrf_token(client)
    run_lab(client, client.get("/api/items/lab-mlp-item-26").json()["code_samples"][0]["code"])
    chart = client.get("/items/lab-mlp-item-26").text
    lines = [float(x) for x in re.findall(r'x2="([\d.]+)"[^>]*class="whisker"', chart)]
    labels = [float(x) for x in re.findall(r'<text x="([\d.]+)"[^>]*chart-value-start', chart)]
    assert len(lines) == len(labels) == 2  # eager and compiled, each with a spread
    # Each line reaches past its median (the rounds spread upwards), and its label past it.
    assert all(label > end for label, end in zip(labels, lines, strict=True)), (labels, lines)


def test_forged_or_malformed_result_lines_are_ignored() -> None:
    from app.labs.labs import parse_results

    good = result_line("ok", 2.0, 1.0)
    text = "\n".join(
        [good, "BACKPROP_LAB_RESULT {not json", 'BACKPROP_LAB_RESULT {"verdict": "best ever"}']
    )
    assert [r["label"] for r in parse_results(text)] == ["ok"]


def test_the_labs_api_lists_runs_and_keeps_a_labs_own_run(client: TestClient) -> None:
    listed = client.get("/api/labs").json()
    assert len(listed) == 10
    mlp = next(lab for lab in listed if lab["slug"] == "lab-mlp-item-26")
    assert mlp["measures"] == ["torch-compile"] and mlp["measurements"] == []

    client.app.state.backprop.run_queue.script = lab_script  # type: ignore[attr-defined]
    started = client.post("/api/labs/lab-mlp-item-26/runs", json={"backend": "cpu"})
    assert started.status_code == 202, started.text
    body = started.json()
    owner = {"X-Run-Token": body["token"]} if body["token"] else {}
    assert events_of(client, body["id"], headers=owner)[-1][1]["verdict"] == "ok"

    lab = client.get("/api/labs/lab-mlp-item-26").json()
    (kept,) = lab["measurements"]
    assert (kept["label"], kept["device"], kept["verdict"]) == ("MLP, batch 256", DEVICE, "faster")
    assert kept["speedup"] == 2.0 and kept["result"]["receipt"]["torch"] == "2.x"


def test_only_labs_can_be_run_as_labs(client: TestClient) -> None:
    assert client.get("/api/labs/dropout").status_code == 404
    refused = client.post("/api/labs/dropout/runs", json={})
    assert refused.status_code == 404 and "No lab is called 'dropout'" in refused.json()["detail"]


def test_a_lab_run_retried_with_its_idempotency_key_starts_nothing_more(
    client: TestClient,
) -> None:
    key = {"Idempotency-Key": "lab-retry-1"}
    first = client.post("/api/labs/lab-mlp-item-26/runs", json={"backend": "cpu"}, headers=key)
    again = client.post("/api/labs/lab-mlp-item-26/runs", json={"backend": "cpu"}, headers=key)
    assert first.status_code == again.status_code == 202
    assert (again.json()["id"], again.json()["token"]) == (
        first.json()["id"],
        first.json()["token"],
    )
    for other in ("/api/labs/lab-graph-break/runs", "/api/runs"):
        body = {"backend": "cpu"} if "labs" in other else {"code": "print(1)", "backend": "cpu"}
        refused = client.post(other, json=body, headers=key)
        assert refused.status_code == 422, refused.text
        assert "already used for a different request" in refused.json()["detail"]
    bad = client.post("/api/labs/lab-mlp-item-26/runs", json={}, headers={"Idempotency-Key": "a b"})
    assert bad.status_code == 400 and "Idempotency-Key header" in bad.json()["detail"]
