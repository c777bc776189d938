"""Every lab of content/labs run as written in the sandbox, on each backend this host has:
one row per compared case with the harness's own figures (medians, spread, verdict, compile
time and cache). Prints a Markdown table; docs/performance.md's lab figures come from it.

    sudo .venv/bin/python bench/labs.py [--backend cpu|cuda|all] [--warm] [--only 01,03]

Starts its own sandbox worker (root is needed). --warm lets the worker fill its compile cache
first, so the compile column shows what a learner gets on a warmed server.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from worker import ROOT, run_lab, started_worker, status

from sandbox.compile_cache import lab_programs

LABS = ROOT / "content" / "labs"


def spread(stats: dict[str, float]) -> str:
    value = stats.get("spread")
    return f" ± {100 * value:.0f}%" if value is not None else ""


def row(lab: str, backend: str, r: dict[str, Any]) -> str:
    eager, compiled = r["eager"], r["compiled"]
    return (
        f"| {lab} | {backend} | {r['label']} | {r['mode']} | {eager['median_ms']:.2f}"
        f"{spread(eager)} | {compiled['median_ms']:.2f}{spread(compiled)} | "
        f"{r['speedup']:.2f}× | {r['verdict']} | {r['compile_seconds']:.1f} | "
        f"{r['receipt']['compile_cache']} | {'match' if r['correct'] else 'DIFFER'} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--backend", default="all", choices=["cpu", "cuda", "all"])
    parser.add_argument("--warm", action="store_true")
    parser.add_argument("--only", default="", help="lab numbers, e.g. 01,03")
    parser.add_argument("--json", help="also write every row's harness figures to this file")
    args = parser.parse_args()
    wanted = [n for n in args.only.split(",") if n]
    programs = [p for p in lab_programs(LABS) if not wanted or p.name.split("-", 1)[0] in wanted]
    extra = ["--warm-labs", str(LABS)] if args.warm else []
    rows = []
    with started_worker(*extra) as sock_path:
        backends = status(sock_path)["backends"]
        chosen = backends if args.backend == "all" else [args.backend]
        if args.warm:
            while not all(
                status(sock_path)["compile_cache"].get(b, "").startswith("ready") for b in chosen
            ):
                time.sleep(1)
        for backend in chosen:
            for program in programs:
                if not program.runs_on(backend):
                    continue
                limits = {"wall_seconds": 180, "cpu_seconds": 360, "memory_mb": 6144}
                results, wall, result, out = run_lab(sock_path, program.code, backend, limits)
                print(f"{program.name} on {backend}: {result.get('verdict')} in {wall:.1f} s",
                      file=sys.stderr)  # fmt: skip
                if result.get("verdict") != "ok":
                    print(out[-1500:], file=sys.stderr)
                for line in results:
                    rows.append((program.name.split("-", 1)[0], backend, line))
                    # Each row as soon as its lab ends: a bench cut short keeps what it measured.
                    print(row(*rows[-1]), file=sys.stderr, flush=True)
        devices = status(sock_path)["devices"]
    receipt = rows[0][2]["receipt"] if rows else {}
    if args.json:
        found = [{"lab": lab, "backend": backend, **r} for lab, backend, r in rows]
        Path(args.json).write_text(json.dumps({"devices": devices, "rows": found}, indent=1))
    print(
        f"\n{platform.machine()}, {devices}; torch {receipt.get('torch')}, "
        f"{receipt.get('threads')} threads; {receipt.get('timing_method')}\n"
    )
    print("| lab | backend | case | mode | eager ms | compiled ms | speedup | verdict | "
          "compile s | cache | outputs |")  # fmt: skip
    print("|---|---|---|---|---:|---:|---:|---|---:|---|---|")
    for lab, backend, r in rows:
        print(row(lab, backend, r))


if __name__ == "__main__":
    main()
