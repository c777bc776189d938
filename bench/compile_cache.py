"""Compile time of the MLP lab in the sandbox, from an empty compile cache against the sealed
cache the worker warms at start, alternated in one run so that machine drift hits both.
Prints a table.

    sudo .venv/bin/python bench/compile_cache.py [--rounds 3]

Starts its own sandbox worker (root is needed) on a private state folder, with only the MLP
lab to warm. "Cold" runs the lab's code with inductor pointed at an empty folder of the run's
own /tmp: everything is compiled, as for a run before the cache exists or for edited code.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from worker import ROOT, run_lab, started_worker, status

from sandbox.compile_cache import lab_programs

LAB = ROOT / "content" / "labs" / "01-lab-mlp-item-26.md"
COLD_PREFIX = (
    "import os, tempfile\n"
    "os.environ['TORCHINDUCTOR_CACHE_DIR'] = tempfile.mkdtemp()  # an empty cache\n"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    labs = Path(tempfile.mkdtemp(prefix="backprop-compile-bench-"))
    shutil.copy(LAB, labs)
    (code,) = [p.code for p in lab_programs(labs)]
    with started_worker("--warm-labs", str(labs)) as sock_path:
        started = time.monotonic()
        while not status(sock_path).get("compile_cache", {}).get("cpu", "").startswith("ready"):
            if time.monotonic() - started > 300:
                sys.exit("the compile cache was not warm after 300 s")
            time.sleep(0.5)
        warmed = time.monotonic() - started
        state = status(sock_path)["compile_cache"]
        print(f"cache warmed {warmed:.1f} s after the worker was ready: {state}")
        compile_s: dict[tuple[str, str], list[float]] = {}
        walls: dict[str, list[float]] = {"cold": [], "warm": []}
        caches: dict[str, set[str]] = {"cold": set(), "warm": set()}
        for _ in range(args.rounds):
            for kind, program in (("cold", COLD_PREFIX + code), ("warm", code)):
                results, wall, result, out = run_lab(sock_path, program)
                if result.get("verdict") != "ok":
                    sys.exit(f"run failed: {result}\n{out[-2000:]}")
                walls[kind].append(wall)
                for line in results:
                    compile_s.setdefault((kind, line["label"]), []).append(line["compile_seconds"])
                    caches[kind].add(line["receipt"]["compile_cache"])
        devices = status(sock_path)["devices"]
    shutil.rmtree(labs, ignore_errors=True)
    print(
        f"\nMLP lab (item 26), {args.rounds} rounds alternated cold/warm; "
        f"{platform.machine()}, {devices}\n"
    )
    print("| cache | case | compile s, median | min | max | receipt says |")
    print("|---|---|---|---|---|---|")
    for (kind, label), values in sorted(compile_s.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(
            f"| {kind} | {label} | {statistics.median(values):.2f} | {min(values):.2f} "
            f"| {max(values):.2f} | {', '.join(sorted(caches[kind]))} |"
        )
    print("\n| cache | whole run s, median | min | max |")
    print("|---|---|---|---|")
    for kind, values in walls.items():
        print(
            f"| {kind} | {statistics.median(values):.1f} | {min(values):.1f} | {max(values):.1f} |"
        )


if __name__ == "__main__":
    main()
