"""A newcomer's trivial run beside a client that keeps the sandbox busy, printed as a table,
for this checkout and (with --baseline DIR) another one side by side, in one run:

- the newcomer (a cookie-less client on 127.0.0.2) runs print('hi'), one run after another:
  seconds from POST /api/runs to the run's result, on a quiet server;
- the same while a busy client (ten fresh browsers on 127.0.0.1, as in the issue) keeps
  asking for 20-second sleepers, as many as its address's limits admit, refilling as they
  end;
- how many of the busy client's runs ran at once, at most.

    .venv/bin/python bench/fair_share.py [--baseline ../old-checkout] [--port 8781]

Each server is `backprop serve` over a private data folder (bench/served.py), its worker
with one slot per core; every client is on this machine, bound to its own loopback address.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx2
from served import ROOT, served

SLEEPER_SECONDS = 20
SLEEPER = f"import time\ntime.sleep({SLEEPER_SECONDS})"
BUSY_BROWSERS = 10
NEWCOMER_RUNS = 3
RESULT_TIMEOUT_SECONDS = 150.0


def client_at(base: str, address: str) -> httpx2.Client:
    """A client whose requests come from `address` (another client to the server)."""
    transport = httpx2.HTTPTransport(local_address=address)
    return httpx2.Client(base_url=base, transport=transport, timeout=60)


def trivial_run_seconds(newcomer: httpx2.Client) -> float:
    """Seconds from POST /api/runs of print('hi') to its result event."""
    began = time.perf_counter()
    answer = newcomer.post("/api/runs", json={"code": "print('hi')", "backend": "cpu"})
    if answer.status_code != 202:
        sys.exit(f"the newcomer's run was refused: {answer.status_code} {answer.text}")
    started = answer.json()
    events = f"/api/runs/{started['id']}/events"
    with newcomer.stream(
        "GET", events, params={"token": started["token"]}, timeout=RESULT_TIMEOUT_SECONDS
    ) as stream:
        for line in stream.iter_lines():
            if line.startswith("event: result"):
                return time.perf_counter() - began
    sys.exit("the newcomer's run ended without a result")


class BusyClient:
    """Fresh browsers on one address asking for sleepers while `stop` is not set."""

    def __init__(self, base: str) -> None:
        self.browsers = []
        for _ in range(BUSY_BROWSERS):
            browser = client_at(base, "127.0.0.1")
            page = browser.get("/").text
            token = re.search(r'name="csrf-token" content="([^"]+)"', page)
            assert token, "no CSRF token on the home page"
            browser.headers["X-CSRF-Token"] = token.group(1)
            self.browsers.append(browser)
        self.runs: list[tuple[httpx2.Client, str]] = []
        self.most_running = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._keep_busy, daemon=True)

    def _keep_busy(self) -> None:
        while not self.stop.is_set():
            for browser in self.browsers:
                answer = browser.post("/api/runs", json={"code": SLEEPER, "backend": "cpu"})
                if answer.status_code == 202:
                    self.runs.append((browser, answer.json()["id"]))
            self.most_running = max(self.most_running, self.running())
            self.stop.wait(0.5)

    def running(self) -> int:
        return sum(
            browser.get(f"/api/runs/{run_id}").json()["status"] == "running"
            for browser, run_id in self.runs[-2 * BUSY_BROWSERS :]
        )

    def __enter__(self) -> BusyClient:
        self.thread.start()
        deadline = time.monotonic() + 60
        while self.running() == 0:  # the sandbox is busy with its runs
            if time.monotonic() > deadline:
                sys.exit("the busy client's runs did not start")
            time.sleep(0.2)
        time.sleep(1.0)  # time enough for all it may run at once to start
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()
        for browser, run_id in self.runs:
            browser.post(f"/api/runs/{run_id}/cancel")
        for browser in self.browsers:
            browser.close()


def measure(root: Path, port: int) -> dict[str, str]:
    ready = lambda health: health["sandbox"]["state"] == "ready"  # noqa: E731
    rows: dict[str, str] = {}
    with (
        served(port, {"SECRET_KEY": "bench"}, ready, root=root) as base,
        client_at(base, "127.0.0.2") as newcomer,
    ):
        print(f"{root.name}: quiet", file=sys.stderr, flush=True)
        trivial_run_seconds(newcomer)  # unmeasured: the first run warms the path
        quiet = [trivial_run_seconds(newcomer) for _ in range(NEWCOMER_RUNS)]
        rows["newcomer's print('hi'), quiet server: median, max s"] = (
            f"{statistics.median(quiet):.2f}, {max(quiet):.2f}"
        )
        print(f"{root.name}: beside a busy client", file=sys.stderr, flush=True)
        with BusyClient(base) as busy:
            loaded = [trivial_run_seconds(newcomer) for _ in range(NEWCOMER_RUNS)]
            most = max(busy.most_running, busy.running())
        rows["newcomer's print('hi') beside a busy client: each run, s"] = ", ".join(
            f"{seconds:.2f}" for seconds in loaded
        )
        rows["busy client's runs running at once, at most"] = str(most)
    print(f"{root.name}: {rows}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout, measured alongside")
    parser.add_argument("--port", type=int, default=8781)
    args = parser.parse_args()
    columns = {"this checkout": measure(ROOT, args.port)}
    if args.baseline:
        baseline = measure(args.baseline.resolve(), args.port + 1)
        columns = {"baseline": baseline, **columns}
    print(
        f"\nA newcomer's run beside a busy client — {platform.machine()}, {os.cpu_count()} "
        f"CPUs (one sandbox slot each), Python {platform.python_version()}; busy client: "
        f"{BUSY_BROWSERS} fresh browsers on 127.0.0.1 asking for {SLEEPER_SECONDS} s "
        "sleepers; newcomer: a cookie-less client on 127.0.0.2\n"
    )
    names = list(columns)
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    rows = list(dict.fromkeys(row for column in columns.values() for row in column))
    for row in rows:
        print(f"| {row} | " + " | ".join(columns[n].get(row, "-") for n in names) + " |")


if __name__ == "__main__":
    main()
