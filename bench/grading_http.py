"""End-to-end timing of graded submissions through the HTTP API (request sent → final
result event read), beside a plain run of the same code, measured interleaved in one run so
all three see the same machine. Prints a table.

    .venv/bin/python bench/grading_http.py [--exercise gelu-autograd-function] [--rounds 20]

Starts its own app and sandbox worker (root is needed for the sandbox) on a private database.
The code sent is the exercise's reference, so every test runs to the end (a failing test
can end early); `submit` grades every test, `run` the visible ones, and the plain run
executes the reference as a script. Targets (issue 20): submit p50 <= 1.5 s for about 12
tests, run mode p50 <= 0.5 s, on this CPU. bench/grading.py times the same kinds through the
worker's socket alone; the difference is the app's share (HTTP, database, event stream)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
import urllib.request
from pathlib import Path

from served import served

ROOT = Path(__file__).resolve().parent.parent
TARGETS_MS = {"submit": 1500, "run": 500}


def post(base: str, path: str, body: dict[str, object]) -> tuple[str, str]:
    """Start a run or a submission as a cookie-less client: its id and owning query."""
    request = urllib.request.Request(
        f"{base}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        accepted = json.load(response)
    return str(accepted["id"]), f"?token={accepted['token']}"


def final_result(url: str) -> dict[str, object]:
    """The `result` event's data of an events stream."""
    with urllib.request.urlopen(url, timeout=120) as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "result":
                result: dict[str, object] = json.loads(line[6:])
                return result
    raise RuntimeError(f"{url}: the stream ended without a result")


def timed(base: str, slug: str, code: str, kind: str) -> tuple[float, dict[str, object]]:
    """Milliseconds from sending the request to reading the final result, and the result."""
    started = time.perf_counter()
    if kind == "plain":
        run_id, owner = post(base, "/api/runs", {"code": code, "backend": "cpu"})
        result = final_result(f"{base}/api/runs/{run_id}/events{owner}")
        ok = result["verdict"] == "ok"
    else:
        path = f"/api/exercises/{slug}/submissions"
        sub_id, owner = post(base, path, {"code": code, "backend": "cpu", "mode": kind})
        result = final_result(f"{base}{path}/{sub_id}/events{owner}")
        ok = result["verdict"] == "passed"
    elapsed = (time.perf_counter() - started) * 1000
    if not ok:
        raise RuntimeError(f"{kind}: the reference did not pass: {result}")
    return elapsed, result


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="gelu-autograd-function")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--port", type=int, default=8767)
    args = parser.parse_args()
    code = (ROOT / "content" / "exercises" / args.exercise / "reference.py").read_text()
    settings = {
        "SECRET_KEY": "bench",
        "RUNS_PER_MINUTE": "100000",
        "CONCURRENT_RUNS": "1000",
        "RUNS_PER_MINUTE_PER_CLIENT": "100000",
        "CONCURRENT_RUNS_PER_CLIENT": "1000",
    }
    kinds = ("plain", "run", "submit")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    # The worker's own wall time of each (its jails, the grading), to tell the sandbox's
    # share from the app's and the transport's.
    walls: dict[str, list[float]] = {k: [] for k in kinds}
    tests: dict[str, int] = {"plain": 0}
    device = ""
    with served(args.port, settings, lambda health: health["sandbox"]["available"]) as base:
        for kind in kinds:  # warm-up: the zygotes, the app's caches
            timed(base, args.exercise, code, kind)
        for _ in range(args.rounds):
            for kind in kinds:  # interleaved: each kind sees the same machine noise
                elapsed, result = timed(base, args.exercise, code, kind)
                times[kind].append(elapsed)
                walls[kind].append(float(result["wall_ms"] or 0))  # type: ignore[arg-type]
                if kind != "plain":
                    tests[kind] = len(result["tests"])  # type: ignore[arg-type]
                device = str(result.get("device") or device)

    print(
        f"\nBackprop grading latency — {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}; device: {device}"
    )
    print(
        f"exercise {args.exercise} (its reference, on the CPU backend); {args.rounds} rounds "
        "of the three kinds, interleaved, after one warm-up each\n"
    )
    print(
        "| kind | tests | p50 ms | p90 ms | min ms | worker wall p50 ms | target p50 "
        "| vs plain run (p50) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    plain = statistics.median(times["plain"])
    for kind in kinds:
        values = times[kind]
        p50 = statistics.median(values)
        target = f"<= {TARGETS_MS[kind]}" if kind in TARGETS_MS else ""
        print(
            f"| {kind} | {tests[kind]} | {p50:.0f} | {pct(values, 0.9):.0f} | {min(values):.0f} "
            f"| {statistics.median(walls[kind]):.0f} | {target} | {p50 / plain:.1f}x |"
        )


if __name__ == "__main__":
    main()
