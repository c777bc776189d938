"""How long grading takes, end to end through the worker's socket: a plain run of the
reference code, Run mode (the visible tests) and Submit (every test) of the same code, in
interleaved rounds on one worker, beside the same grading done by the trusted in-process
runner (the tests' own cost, with no jail and no wire). Prints a table.

    sudo .venv/bin/python bench/grading.py [--exercise gelu-autograd-function] [--rounds 10]

Times are the client's: from sending the request to reading the result (the HTTP layer
of a submission comes on top, a few milliseconds)."""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from typing import Any

from worker import ROOT, send, started_worker, status

from sandbox.grading.exercise import grading_request, load
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol import GRADING_VERSION, OLDEST_VERSION, Mode


def timed(sock_path: Any, code: str, grading: dict[str, Any] | None) -> tuple[float, dict]:
    request: dict[str, Any] = {"id": f"b{time.monotonic_ns()}", "code": code, "backend": "cpu"}
    version = OLDEST_VERSION
    if grading is not None:
        request["grading"] = grading
        version = GRADING_VERSION
    started = time.perf_counter()
    events = send(sock_path, {"op": "run", "v": version, "request": request})
    seconds = time.perf_counter() - started
    result = events[-1]["result"]
    if result["verdict"] != "ok":
        raise SystemExit(f"run failed: {json.dumps(result)[:2000]}")
    if grading is not None and result["grading"]["verdict"] != "passed":
        raise SystemExit(f"grading failed: {json.dumps(result['grading'])[:2000]}")
    return seconds, result


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--exercise", default="gelu-autograd-function")
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    exercise = load(ROOT / "content" / "exercises" / args.exercise)
    code = exercise.reference
    tests = exercise.tests()
    visible = sum(t.visible for t in tests)
    rows: dict[str, list[float]] = {}
    with started_worker() as sock_path:
        device = status(sock_path)["devices"]["cpu"]
        for mode in ("plain", "run", "submit"):  # one untimed warm-up each
            grading = None if mode == "plain" else grading_request(exercise, Mode(mode), 1)
            timed(sock_path, code, grading.to_json() if grading else None)
        for n in range(args.rounds):
            for mode in ("plain", "run", "submit"):
                grading = None if mode == "plain" else grading_request(exercise, Mode(mode), n)
                seconds, result = timed(sock_path, code, grading.to_json() if grading else None)
                rows.setdefault(mode, []).append(seconds * 1000)
                if grading is not None:
                    tests_ms = sum(t["ms"] for t in result["grading"]["tests"])
                    rows.setdefault(f"{mode}: inside the tests", []).append(tests_ms)
        for n in range(args.rounds):
            started = time.perf_counter()
            grade_in_process(exercise, code, seed=n)
            rows.setdefault("submit, trusted in-process runner", []).append(
                (time.perf_counter() - started) * 1000
            )
    labels = {
        "plain": "plain run of the same code",
        "run": f"Run mode ({visible} visible tests)",
        "run: inside the tests": "  of which the tests themselves",
        "submit": f"Submit ({len(tests)} tests)",
        "submit: inside the tests": "  of which the tests themselves",
        "submit, trusted in-process runner": f"the same {len(tests)} tests in one process, no jail",
    }
    print(f"\n{args.exercise} on {device}, {platform.python_version()}, {args.rounds} rounds")
    print(f"{'':52} {'p50 ms':>8} {'p90 ms':>8} {'min ms':>8} {'max ms':>8}")
    for key, label in labels.items():
        values = rows[key]
        print(
            f"{label:52} {statistics.median(values):8.0f} {quantile(values, 0.9):8.0f} "
            f"{min(values):8.0f} {max(values):8.0f}"
        )


if __name__ == "__main__":
    main()
