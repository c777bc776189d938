"""The first run of every lab on a freshly started server while a CPU hog keeps every core
busy: what a learner meets on a busy machine, right after a restart, when the server's own
compile warming has only begun. One row per lab: its verdict, the seconds the learner waited
(as the client saw them), how long it waited for the warmer before it started, and the
harness's compile time and cache state.

    sudo .venv/bin/python bench/labs_busy.py [--hog 2] [--vs PATH] [--only 01,03]

--hog N: busy loops at normal priority (default: one per core), started before the server.
--vs PATH: the same, first, with the code of another checkout (e.g. a worktree of the
revision before a change), printed beside this one. Both use this checkout's labs.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from busy import hog
from worker import ROOT, started_worker, status

from sandbox.compile_cache import lab_programs

LABS = ROOT / "content" / "labs"


@dataclass
class FirstRun:
    lab: str
    verdict: str
    seconds: float  # from sending the run to its result
    before_start: float  # from sending it to its `started` event (queue, waiting for warmer)
    waited_for_warmer: bool
    compile_seconds: list[float]
    caches: list[str]
    detail: str


def timed_run(sock_path: Path, code: str, version: int) -> tuple[list[tuple[float, Any]], float]:
    """The run's events, each with the seconds after sending at which it arrived."""
    request = {"id": f"b{time.monotonic_ns()}", "code": code, "backend": "cpu", "limits": {}}
    sent = time.perf_counter()
    events = []
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock_path))
        s.sendall(json.dumps({"op": "run", "v": version, "request": request}).encode() + b"\n")
        for line in s.makefile("rb"):
            events.append((time.perf_counter() - sent, json.loads(line)))
            if events[-1][1]["type"] == "result":
                break
    return events, time.perf_counter() - sent


def first_runs(checkout: Path, programs: list[Any], hog_processes: int) -> list[FirstRun]:
    rows = []
    with hog(hog_processes), started_worker("--warm-labs", str(LABS), checkout=checkout) as sock:
        version = min(3, int(status(sock).get("protocol", 1)))  # an older worker's own
        for program in programs:
            events, seconds = timed_run(sock, program.code, version)
            result = events[-1][1].get("result", {})
            started = [at for at, e in events if e["type"] == "started"]
            out = "".join(e.get("data", "") for _, e in events)
            lines = [
                json.loads(line.split(" ", 1)[1])
                for line in out.splitlines()
                if line.startswith("BACKPROP_LAB_RESULT ")
            ]
            rows.append(
                FirstRun(
                    lab=program.name.split(".md")[0],
                    verdict=result.get("verdict", "?"),
                    seconds=seconds,
                    before_start=started[0] if started else seconds,
                    waited_for_warmer=any(
                        e["type"] == "phase" for at, e in events if not started or at < started[0]
                    ),
                    compile_seconds=[r["compile_seconds"] for r in lines],
                    caches=[r["receipt"]["compile_cache"] for r in lines],
                    detail=result.get("detail") or "",
                )
            )
            print(f"  {rows[-1]}", file=sys.stderr, flush=True)
    return rows


def table(label: str, rows: list[FirstRun]) -> None:
    print(f"\n{label}\n")
    print("| lab | verdict | first run, s | before it started, s | waited for the warmer | "
          "compile, s (harness) | cache | detail |")  # fmt: skip
    print("|---|---|---:|---:|---|---|---|---|")
    for r in rows:
        compile_text = ", ".join(f"{c:.1f}" for c in r.compile_seconds) or "–"
        print(
            f"| {r.lab} | {r.verdict} | {r.seconds:.1f} | {r.before_start:.1f} | "
            f"{'yes' if r.waited_for_warmer else 'no'} | {compile_text} | "
            f"{', '.join(sorted(set(r.caches))) or '–'} | {r.detail[:90]} |"
        )
    done = sum(r.verdict == "ok" for r in rows)
    slowest = max(r.seconds for r in rows)
    print(f"\n{done} of {len(rows)} labs completed; the slowest first run took {slowest:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hog", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--vs", type=Path, help="another checkout, measured first")
    parser.add_argument("--only", default="", help="lab numbers, e.g. 01,03")
    args = parser.parse_args()
    wanted = [n for n in args.only.split(",") if n]
    programs = [p for p in lab_programs(LABS) if not wanted or p.name.split("-", 1)[0] in wanted]
    load = os.getloadavg()[0]
    print(f"{len(programs)} labs, {os.cpu_count()} cores, hog of {args.hog} busy loops, "
          f"load average before {load:.1f}")  # fmt: skip
    results = []
    if args.vs is not None:
        results.append((f"Code at {args.vs}", first_runs(args.vs.resolve(), programs, args.hog)))
    results.append(("This checkout", first_runs(ROOT, programs, args.hog)))
    for label, rows in results:
        table(label, rows)


if __name__ == "__main__":
    main()
