"""How OpenMP's wait policy in the zygotes (sandbox/zygote_client.py) changes run times: a
short sample alone, the same sample while a cold torch.compile runs in the other CPU slot,
and a lab's eager and compiled medians. Each policy gets its own worker, started in turn
round by round so that machine drift hits both. Prints a table.

    sudo .venv/bin/python bench/omp_wait.py [--rounds 2]

libgomp's default spins a while (GOMP_SPINCOUNT, 300000 turns) before a waiting thread
sleeps; PASSIVE sleeps at once.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from worker import ROOT, run_lab, started_worker, status

from app.importer.parse import parse_catalogue, parse_item

CONTENT = ROOT / "content"
# A short training loop over several small models (3 to 5 s alone on two cores), and one
# that compiles a ResNet-50 training step from nothing (about 35 s alone).
SHORT = ("deep-learning/28-hyperparameter-tuning-order.md", 2)
COMPILING = ("torch-compile/05-compiled-resnet50-training-step.md", 2)
LAB = ("labs/01-lab-mlp-item-26.md", 1)
# Starts `python -m sandbox` with the zygotes' OpenMP settings replaced by argv[1] (JSON).
STARTER = """
import json, runpy, sys
import sandbox.zygote_client as zc
zc.OPENMP_WAITING = json.loads(sys.argv.pop(1))
sys.argv[0] = "sandbox"
runpy.run_module("sandbox", run_name="__main__", alter_sys=True)
"""
POLICIES = {
    "spin (libgomp's default)": {},
    "spin briefly (GOMP_SPINCOUNT=10000)": {"GOMP_SPINCOUNT": "10000"},
    "sleep (OMP_WAIT_POLICY=PASSIVE)": {"OMP_WAIT_POLICY": "PASSIVE"},
}


def sample(path: str, index: int) -> str:
    catalogue = parse_catalogue(CONTENT / "decks.yml", "decks.yml")
    item = parse_item((CONTENT / path).read_text(encoding="utf-8"), path, catalogue)
    return next(s.code for s in item.samples if s.index == index)


def seconds(sock_path: Path, code: str) -> float:
    _, wall, result, out = run_lab(sock_path, code, limits={"wall_seconds": 180})
    if result.get("verdict") != "ok":
        sys.exit(f"run failed: {result}\n{out[-2000:]}")
    return wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    short, compiling, lab = sample(*SHORT), sample(*COMPILING), sample(*LAB)
    figures: dict[tuple[str, str], list[float]] = {}
    devices = ""
    for _ in range(args.rounds):
        for name, policy in POLICIES.items():
            with started_worker(python=("-c", STARTER, json.dumps(policy))) as sock_path:
                devices = status(sock_path)["devices"]
                figures.setdefault((name, "short sample alone, s"), []).append(
                    seconds(sock_path, short)
                )
                with ThreadPoolExecutor(2) as pool:
                    beside = pool.submit(seconds, sock_path, compiling)
                    time.sleep(3)  # the compile is under way
                    figures.setdefault((name, "short sample beside a compile, s"), []).append(
                        seconds(sock_path, short)
                    )
                    figures.setdefault((name, "the compiling sample, s"), []).append(
                        beside.result()
                    )
                results, _, _, _ = run_lab(sock_path, lab)
                for line in results:
                    for kind in ("eager", "compiled"):
                        key = (name, f"lab '{line['label']}' {kind} median, ms")
                        figures.setdefault(key, []).append(line[kind]["median_ms"])
    print(f"\n{args.rounds} rounds, policies in turn; {platform.machine()}, {devices}\n")
    names = list(POLICIES)
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for measure in dict.fromkeys(m for _, m in figures):
        cells = []
        for name in names:
            values = figures.get((name, measure), [])
            cells.append(
                f"{statistics.median(values):.3g} ({min(values):.3g}-{max(values):.3g})"
                if values
                else "-"
            )
        print(f"| {measure} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
