"""End-to-end latency of running a trivial torch snippet through the HTTP API, beside the
cost of a cold `python -c "import torch"` measured in the same run, and runs per second
with several clients at once: each on a loopback address of its own (the sandbox shares its
slots fairly between client addresses: one address holds at most all but one), and all on
one address. Prints tables.

    .venv/bin/python bench/sandbox_latency.py [--runs 50] [--port 8766]

Starts its own app and sandbox worker (root is needed for the sandbox) on a private database.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from served import served

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = "import torch\nprint(torch.ones(3).sum().item())\n"


def connect(base: str, source: str) -> http.client.HTTPConnection:
    """A connection to the app whose requests come from the loopback address `source`."""
    url = urllib.parse.urlsplit(base)
    return http.client.HTTPConnection(
        str(url.hostname), url.port, timeout=60, source_address=(source, 0)
    )


def post(base: str, code: str, source: str) -> tuple[str, str]:
    """Start a run as a cookie-less API client: its id and the query that owns it."""
    connection = connect(base, source)
    body = json.dumps({"code": code, "backend": "cpu"})
    connection.request("POST", "/api/runs", body, {"Content-Type": "application/json"})
    answer = json.load(connection.getresponse())
    connection.close()
    # Cookie-less clients own their runs through a capability token (older servers had none).
    token = answer.get("token")
    return str(answer["id"]), f"?token={token}" if token else ""


def run_once(base: str, source: str = "127.0.0.1") -> float:
    """Milliseconds from sending the HTTP request to reading the final result event."""
    started = time.perf_counter()
    run_id, owner = post(base, SNIPPET, source)
    connection = connect(base, source)
    connection.request("GET", f"/api/runs/{run_id}/events{owner}")
    with connection.getresponse() as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "result":
                result = json.loads(line[6:])
                if result["verdict"] != "ok":
                    raise RuntimeError(f"run failed: {result}")
                break
    return (time.perf_counter() - started) * 1000


def cold_import_ms() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return (time.perf_counter() - started) * 1000


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args()
    settings = {
        "SECRET_KEY": "bench",
        "RUNS_PER_MINUTE": "100000",
        "CONCURRENT_RUNS": "1000",
        "RUNS_PER_MINUTE_PER_CLIENT": "100000",
        "CONCURRENT_RUNS_PER_CLIENT": "1000",
    }
    with served(args.port, settings, lambda health: health["sandbox"]["available"]) as base:
        for _ in range(3):
            run_once(base)  # warm-up
        latencies, colds = [], []
        for i in range(args.runs):
            latencies.append(run_once(base))
            if i % 10 == 0:  # interleaved, so both see the same machine noise
                colds.append(cold_import_ms())
        throughput = {}
        for clients, addresses in ((2, 2), (8, 8), (8, 1)):
            total = clients * 8
            sources = [f"127.0.0.{1 + n % addresses}" for n in range(total)]
            started = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                list(pool.map(lambda source: run_once(base, source), sources))
            throughput[clients, addresses] = total / (time.perf_counter() - started)

    import torch

    p50, p95 = pct(latencies, 0.5), pct(latencies, 0.95)
    cold = statistics.median(colds)
    print(
        f"\nBackprop sandbox latency — {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, torch {torch.__version__}"
    )
    print(
        f"snippet: {SNIPPET.strip()!r}; CPU backend; {args.runs} sequential runs after 3 warm-ups\n"
    )
    print("| measure | p50 ms | p95 ms | runs |")
    print("|---|---:|---:|---:|")
    print(f"| HTTP POST → final result event | {p50:.0f} | {p95:.0f} | {len(latencies)} |")
    print(
        f'| cold `python -c "import torch"` | {cold:.0f} | {pct(colds, 0.95):.0f} | {len(colds)} |'
    )
    print(f"\nratio cold import / sandbox run (p50): {cold / p50:.1f}x; target p50 <= 150 ms\n")
    print("| concurrent clients | client addresses | runs/s |")
    print("|---:|---:|---:|")
    for (clients, addresses), rate in throughput.items():
        print(f"| {clients} | {addresses} | {rate:.1f} |")


if __name__ == "__main__":
    main()
