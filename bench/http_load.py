"""Throughput and latency of the library pages under load, printed as a table.

Starts Backprop with one uvicorn worker pinned to CPU 0 over a private copy of the database,
then drives it with wrk pinned to CPU 1 (so the load generator does not steal the server's
core), for each page: 1 connection (service time) and 32 connections (saturation). The item
page is measured twice: for a guest without cookies (what wrk is; nothing is recorded) and
for a signed-in reader (a bearer token: the sign-in lookup and the visit write included).

    .venv/bin/python bench/http_load.py [--seconds 10] [--connections 32]
        [--only 'item page'] [--against ../checkout-before --rounds 3]

With --against, the pages are measured on another checkout too (its app code, this
interpreter), the two taking turns, so that a before and after share one run of a shared,
noisy machine.

Needs wrk (Debian package `wrk`); installs it with apt-get when run as root.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ("item page", "/items/batch-normalization"),
    ("item page, signed in", "/items/batch-normalization"),
    ("filtered list", "/items?deck=deep-learning&difficulty=intermediate"),
    ("search (htmx fragment)", "/items?q=gradient"),
    ("JSON item", "/api/items/batch-normalization"),
    ("exercise list", "/exercises"),
    ("exercise search (htmx fragment)", "/exercises?q=attention&difficulty=medium"),
    ("exercise page", "/exercises/multi-head-attention"),
    ("exercise page, signed in", "/exercises/multi-head-attention"),
]
BENCH_USER = ("bench-reader", "a bench reader's long passphrase")


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, capture_output=True)
        found = shutil.which("wrk")
    if not found:
        sys.exit("wrk is needed: apt-get install wrk")
    return found


def to_ms(value: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", value).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(
    wrk: str, url: str, connections: int, seconds: int, headers: list[str]
) -> dict[str, float]:
    cmd = ["taskset", "-c", "1", wrk, "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
    for header in headers:
        cmd += ["-H", header]
    out = subprocess.run([*cmd, url], check=True, capture_output=True, text=True).stdout
    pct = dict(re.findall(r"^\s+(50|99)\.?0*%\s+(\S+)\s*$", out, re.M))
    if set(pct) != {"50", "99"}:
        sys.exit(f"could not read wrk's output:\n{out}")
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    done = re.search(r"(\d+) requests in", out)
    return {
        "requests": float(done.group(1)) if done else 0.0,
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
        "p50": to_ms(pct["50"]),
        "p99": to_ms(pct["99"]),
        "errors": float(errors.group(1)) if errors else 0.0,
    }


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process `pid` has used: divided by the requests served,
    the cost of a page, which a noisy machine blurs less than its rate (time stolen by
    other guests is not counted; it slows the rate)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bearer_token(base: str) -> str:
    """Create the bench's reader and sign in through the API."""
    username, password = BENCH_USER
    body = json.dumps({"username": username, "password": password}).encode()
    request = urllib.request.Request(
        f"{base}/api/users", data=body, headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request, timeout=10)
    form = urllib.parse.urlencode({"username": username, "password": password}).encode()
    with urllib.request.urlopen(f"{base}/api/token", data=form, timeout=10) as response:
        return str(json.load(response)["access_token"])


def give_records(base: str, token: str) -> None:
    """The bench's reader has something on the exercise the bench opens (two hints shown),
    so that its signed-in page reads a learner with records."""
    for _ in range(2):
        request = urllib.request.Request(
            f"{base}/api/exercises/multi-head-attention/hints",
            data=b"",
            headers={"Authorization": f"Bearer {token}"},
        )
        urllib.request.urlopen(request, timeout=10)


def measure(
    root: Path, pages: list[tuple[str, str]], wrk: str, args: argparse.Namespace
) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    """(page, 1-connection figures, loaded figures) for each page, served by the checkout at
    `root` (its own app code, this interpreter) over a fresh database."""
    with tempfile.TemporaryDirectory() as tmp, open(Path(tmp) / "server.log", "wb") as log:
        env = {
            **os.environ,
            "DATA_DIR": tmp,
            "DATABASE_URL": f"sqlite:///{tmp}/bench.db",
            "PORT": str(args.port),
            "SECRET_KEY": "bench",
        }
        server = subprocess.Popen(
            [
                "taskset",
                "-c",
                "0",
                sys.executable,
                "-m",
                "uvicorn",
                "app.asgi:app",
                "--port",
                str(args.port),
                "--log-level",
                "warning",
                "--no-access-log",
            ],
            cwd=root,
            env=env,
            # Its log lines (one per request) go to a file: a terminal would slow the server
            # down, and they would bury the table.
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{args.port}"
        try:
            for _ in range(200):
                try:
                    urllib.request.urlopen(base + "/api/health", timeout=1)
                    break
                except OSError:
                    time.sleep(0.1)
            token = bearer_token(base)
            give_records(base, token)
            auth = f"Authorization: Bearer {token}"
            rows = []
            for name, path in pages:
                headers = ["HX-Request: true"] if "htmx" in name else []
                headers += [auth] if "signed in" in name else []
                run_wrk(wrk, base + path, 4, 2, headers)  # warm-up
                single = run_wrk(wrk, base + path, 1, args.seconds, headers)
                cpu_before = cpu_seconds(server.pid)
                loaded = run_wrk(wrk, base + path, args.connections, args.seconds, headers)
                used = cpu_seconds(server.pid) - cpu_before
                loaded["cpu_ms"] = 1000 * used / max(loaded["requests"], 1)
                rows.append((name, single, loaded))
        finally:
            server.terminate()
            server.wait(timeout=10)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--only", help="measure only the pages whose name contains this (e.g. 'item page')"
    )
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout (say, a worktree of the commit before a change) to measure "
        "in the same run, taking turns with this one",
    )
    parser.add_argument("--rounds", type=int, default=1, help="turns each checkout takes")
    args = parser.parse_args()
    wrk = ensure_wrk()
    pages = [(name, path) for name, path in PAGES if not args.only or args.only in name]
    checkouts = [ROOT, *([args.against.resolve()] if args.against else [])]
    results = []
    for turn in range(1, args.rounds + 1):
        for root in reversed(checkouts):  # the other checkout first: "before", then "after"
            for name, single, loaded in measure(root, pages, wrk, args):
                results.append((root, turn, name, single, loaded))

    import fastapi
    import uvicorn

    print(
        f"\nBackprop HTTP load — {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"FastAPI {fastapi.__version__}, uvicorn {uvicorn.__version__}"
    )
    print(f"server: 1 uvicorn worker on CPU 0; load: wrk on CPU 1, {args.seconds} s per row\n")
    c = args.connections
    print(
        f"| checkout | turn | page | 1 conn p50 ms | 1 conn p99 ms | {c} conn req/s "
        f"| {c} conn p50 ms | {c} conn p99 ms | CPU ms per request | errors |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for root, turn, name, single, loaded in results:
        print(
            f"| {_label(root)} | {turn} | {name} | {single['p50']:.2f} | {single['p99']:.2f} | "
            f"{loaded['rps']:,.0f} | {loaded['p50']:.2f} | {loaded['p99']:.2f} | "
            f"{loaded['cpu_ms']:.2f} | "
            f"{int(loaded['errors'] + single['errors'])} |"
        )
    if args.rounds > 1:
        print_medians(results)
    print(
        "\ntargets: >= 1,000 req/s on one core and p99 <= 50 ms at 32 clients for every page; "
        "search p99 <= 10 ms at 1 client"
    )


def print_medians(results: list[tuple[Path, int, str, dict[str, float], dict[str, float]]]) -> None:
    """Each checkout's median over its turns, and each page's CPU time per request over the
    guest item page's in the same turn: the figure a noisy machine blurs least, since both
    pages of a turn ran minutes apart on one server."""
    guest_cpu = {
        (root, turn): loaded["cpu_ms"]
        for root, turn, name, _, loaded in results
        if name == "item page"
    }
    print("\nMedians over the turns:\n")
    print("| checkout | page | req/s | p99 ms | CPU ms per request | CPU ÷ guest item page's |")
    print("|---|---|---:|---:|---:|---:|")
    seen: dict[tuple[Path, str], list[tuple[int, dict[str, float]]]] = {}
    for root, turn, name, _, loaded in results:
        seen.setdefault((root, name), []).append((turn, loaded))
    for (root, name), turns in seen.items():
        ratios = [
            loaded["cpu_ms"] / guest_cpu[(root, turn)]
            for turn, loaded in turns
            if guest_cpu.get((root, turn))
        ]
        ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
        print(
            f"| {_label(root)} | {name} "
            f"| {statistics.median(t['rps'] for _, t in turns):,.0f} "
            f"| {statistics.median(t['p99'] for _, t in turns):.1f} "
            f"| {statistics.median(t['cpu_ms'] for _, t in turns):.2f} | {ratio} |"
        )


def _label(root: Path) -> str:
    """A checkout by its folder and commit."""
    commit = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{root.name} {commit}".strip()


if __name__ == "__main__":
    main()
