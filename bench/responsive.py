"""Whether the server stays responsive while one client pushes it, printed as a table, for
this checkout and (with --baseline DIR) another one side by side, in one run:

- GET /api/health from a second client: on a quiet server; while one signed-in user fires
  120 wrong-password posts at once; while 32 clients load the signed-in item page;
- a health check refused or unanswered within 10 s counts as 10 s;
- 500 requests at once from one client, of every kind (pages, the JSON API, a signed-in
  page, wrong passwords): how many got a 5xx, and the slowest answer.

    .venv/bin/python bench/responsive.py [--baseline ../old-checkout] [--port 8771]

Each server is `backprop serve` over a private data folder (bench/served.py); wrk loads it.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hostile_traffic import PASSWORD, Browser, pct
from served import ROOT, served

ITEM = "/items/batch-normalization"


HEALTH_TIMEOUT_SECONDS = 10.0


def health_checks(base: str, seconds: float) -> list[float]:
    """GET /api/health back to back for `seconds`: each one's milliseconds, a refusal
    (not 200) or a time-out counting as HEALTH_TIMEOUT_SECONDS (what a load balancer's
    probe would make of it)."""
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(f"{base}/api/health", timeout=HEALTH_TIMEOUT_SECONDS):
                elapsed = time.perf_counter() - started
        except OSError:  # HTTPError (a 503) and time-outs alike
            elapsed = HEALTH_TIMEOUT_SECONDS
        times.append(elapsed * 1000)
        time.sleep(0.02)
    return times


def health_during(base: str, load: threading.Thread) -> list[float]:
    """GET /api/health back to back while `load` runs (started here)."""
    result: dict[str, list[float]] = {}
    watcher = threading.Thread(target=lambda: result.update(t=health_checks(base, 6)))
    watcher.start()
    time.sleep(0.5)  # the watcher's first requests see the start of the load
    load.start()
    load.join()
    watcher.join()
    return result["t"]


def signed_in(base: str, name: str) -> Browser:
    user = Browser(base)
    user.request("GET", "/signup")
    user.request("POST", "/signup", {"username": name, "password": PASSWORD})
    user.request("GET", "/account")
    return user


def password_flood(base: str, flood: int) -> tuple[list[float], list[int]]:
    """`flood` wrong-password posts at once from one signed-in user."""
    user = signed_in(base, "flooder")
    statuses: list[int] = []

    def wrong(n: int) -> None:
        form = {"current_password": f"wrong {n} wrong", "new_password": f"new one {n} long"}
        try:
            statuses.append(user.request("POST", "/account/password", form)[0])
        except OSError:  # no answer in time
            statuses.append(0)

    def flood_all() -> None:
        with ThreadPoolExecutor(flood) as pool:
            list(pool.map(wrong, range(flood)))

    return health_during(base, threading.Thread(target=flood_all)), statuses


def page_load(base: str, cookie: str) -> tuple[list[float], str]:
    """32 clients on the signed-in item page for 5 s (wrk): health meanwhile, and wrk's
    requests per second."""
    wrk = shutil.which("wrk")
    if wrk is None:
        sys.exit("wrk is needed: apt-get install wrk")
    out: dict[str, str] = {}

    def load() -> None:
        command = [wrk, "-t2", "-c32", "-d5s", "-H", f"Cookie: {cookie}", base + ITEM]
        out["wrk"] = subprocess.run(command, capture_output=True, text=True).stdout

    latencies = health_during(base, threading.Thread(target=load))
    rate = next(
        (line.split()[-1] for line in out["wrk"].splitlines() if "Requests/sec" in line), "?"
    )
    return latencies, rate


def burst(base: str, user: Browser, count: int = 500) -> tuple[int, float, dict[int, int]]:
    """`count` requests at once from one client, mixed: 5xx answers, the slowest, and the
    statuses counted."""
    import http.client
    import urllib.parse

    kinds = [
        ("GET", "/", None),
        ("GET", "/items?q=gradient", None),
        ("GET", "/api/items/dropout", None),
        ("GET", ITEM, "signed"),
        ("GET", "/dashboard", "signed"),
        ("POST", "/account/password", "signed"),
    ]
    host = urllib.parse.urlsplit(base)
    statuses: dict[int, int] = {}
    slowest = 0.0
    lock = threading.Lock()

    def one(n: int) -> None:
        started = time.perf_counter()
        try:
            status = ask(n)
        except OSError:  # no answer in time
            status = 0
        record(status, time.perf_counter() - started)

    def record(status: int, seconds: float) -> None:
        nonlocal slowest
        with lock:
            statuses[status] = statuses.get(status, 0) + 1
            slowest = max(slowest, seconds)

    def ask(n: int) -> int:
        method, path, who = kinds[n % len(kinds)]
        if who == "signed" and method == "POST":
            form = {"current_password": f"wrong {n}", "new_password": f"another {n} pass"}
            status = user.request(method, path, form)[0]
        elif who == "signed":
            status = user.request(method, path)[0]
        else:
            connection = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
            connection.request(method, path)
            response = connection.getresponse()
            response.read()
            status = response.status
            connection.close()
        return status

    with ThreadPoolExecutor(count) as pool:
        list(pool.map(one, range(count)))
    errors = sum(n for status, n in statuses.items() if status >= 500 or status == 0)
    return errors, slowest * 1000, statuses


def _flood_rows(base: str) -> dict[str, str]:
    quiet = health_checks(base, 3)
    flood, statuses = password_flood(base, 120)
    return {
        "health, quiet: p50 / p99 ms": f"{pct(quiet, 0.5):.1f} / {pct(quiet, 0.99):.1f}",
        "health during 120 wrong passwords at once: p50 / p99 / max ms": (
            f"{pct(flood, 0.5):.1f} / {pct(flood, 0.99):.1f} / {max(flood):.1f}"
        ),
        "the 120 wrong passwords": (
            f"{statuses.count(429)} refused 429, {sum(s in (200, 303, 422) for s in statuses)} "
            f"checked, {sum(s >= 500 for s in statuses)} 5xx, {statuses.count(0)} unanswered"
        ),
    }


def _page_rows(base: str) -> dict[str, str]:
    reader = signed_in(base, "reader")
    reader.request("GET", ITEM)
    cookie = "; ".join(f"{k}={v}" for k, v in reader.cookies.items())
    loaded, rate = page_load(base, cookie)
    return {
        "health during 32 clients on the signed-in item page: p50 / p99 ms": (
            f"{pct(loaded, 0.5):.1f} / {pct(loaded, 0.99):.1f}"
        ),
        "signed-in item page under that load (wrk, req/s)": rate,
    }


def _burst_rows(base: str) -> dict[str, str]:
    errors, slowest, counted = burst(base, signed_in(base, "burster"))
    return {
        "500 mixed requests at once: 5xx or unanswered, slowest ms": f"{errors}, {slowest:.0f}",
        "their statuses": ", ".join(f"{k}: {v}" for k, v in sorted(counted.items())),
    }


# In this order: a server that one of them leaves stuck has its later rows say so.
SCENARIOS = {"pages": _page_rows, "flood": _flood_rows, "burst": _burst_rows}


def measure(root: Path, port: int, only: str | None = None) -> dict[str, str]:
    not_starting = lambda health: health["sandbox"]["state"] != "starting"  # noqa: E731
    rows: dict[str, str] = {}
    with served(port, {"SECRET_KEY": "bench"}, not_starting, root=root) as base:
        for name, scenario in SCENARIOS.items():
            if only and name != only:
                continue
            print(f"{root.name}: {name}", file=sys.stderr, flush=True)
            try:
                rows.update(scenario(base))
            except OSError as exc:  # the server stopped answering
                rows[f"{name}: the server stopped answering"] = f"{type(exc).__name__}"
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout, measured alongside")
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--only", choices=list(SCENARIOS), help="one scenario alone")
    args = parser.parse_args()
    columns = {"this checkout": measure(ROOT, args.port, args.only)}
    if args.baseline:
        baseline = measure(args.baseline.resolve(), args.port + 1, args.only)
        columns = {"baseline": baseline, **columns}
    print(
        f"\nBackprop's responsiveness under one client's load — {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; server: backprop serve "
        "(one uvicorn process), load from this machine\n"
    )
    names = list(columns)
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    rows = list(dict.fromkeys(row for column in columns.values() for row in column))
    for row in rows:
        print(f"| {row} | " + " | ".join(columns[n].get(row, "-") for n in names) + " |")


if __name__ == "__main__":
    main()
