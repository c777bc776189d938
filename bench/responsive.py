"""Whether the server stays responsive while one client pushes it, printed as a table, for
this checkout and (with --baseline DIR) another one side by side, in one run:

- GET /api/health from a probe in a process of its own (every 50 ms), and a signed-in
  reader's item page from another: on a quiet server; while one signed-in user opens 120
  connections at once, each posting a wrong password (half to /account/delete, half to
  /account/password); while 32 clients load the signed-in item page; during 500 mixed
  requests at once;
- a health check refused or unanswered within 10 s counts as 10 s;
- the 500 requests at once from one client, of every kind (pages, the JSON API, a signed-in
  page, wrong passwords): how many got a 5xx, and the slowest answer.

The bursts connect first and then send together (a barrier between), so the server meets
them as one burst, as a client with 120 sockets would make it.

    .venv/bin/python bench/responsive.py [--baseline ../old-checkout] [--port 8771] [--hog 2]

--hog N: N busy loops at normal priority for the whole run, a busy machine's other work.

Each server is `backprop serve` over a private data folder (bench/served.py); wrk loads it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from busy import hog
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


def probe(url: str, seconds: float, cookie: str = "") -> list[float]:
    """GET `url` every 50 ms for `seconds` (in the probe's own process): each one's ms, a
    refusal or a time-out counting as HEALTH_TIMEOUT_SECONDS."""
    times = []
    end = time.monotonic() + seconds
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    while time.monotonic() < end:
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=HEALTH_TIMEOUT_SECONDS) as answer:
                answer.read()
                elapsed = time.perf_counter() - started
        except OSError:
            elapsed = HEALTH_TIMEOUT_SECONDS
        times.append(elapsed * 1000)
        time.sleep(max(0.0, 0.05 - elapsed))
    return times


def _probe_process(url: str, seconds: float, cookie: str = "") -> subprocess.Popen[str]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from responsive import probe; "
        "print(json.dumps(probe(sys.argv[2], float(sys.argv[3]), sys.argv[4])))"
    )
    here = str(Path(__file__).resolve().parent)
    command = [sys.executable, "-c", code, here, url, str(seconds), cookie]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True)


def _collect(process: subprocess.Popen[str]) -> list[float]:
    out, _ = process.communicate(timeout=120)
    return [float(x) for x in json.loads(out)]


def health_during(
    base: str, load: threading.Thread, page: tuple[str, str] | None = None
) -> list[float] | tuple[list[float], list[float]]:
    """GET /api/health every 50 ms from a process of its own while `load` runs (started
    here); with `page` (a path and a cookie), that page too, from a second process."""
    probes = [_probe_process(f"{base}/api/health", 6)]
    if page is not None:
        probes.append(_probe_process(base + page[0], 6, page[1]))
    time.sleep(1.0)  # the probes are up (a fresh interpreter) and see the start of the load
    load.start()
    load.join()
    results = [_collect(p) for p in probes]
    return (results[0], results[1]) if page is not None else results[0]


def at_once(
    base: str, asks: list[tuple[str, str, dict[str, str] | None, Browser | None]]
) -> list[tuple[int, float]]:
    """Each (method, path, form, who) on a connection of its own: all connected first, then
    sent together. Each answer's status (0: none in time) and milliseconds."""
    import http.client
    import urllib.parse

    host = urllib.parse.urlsplit(base)
    gate = threading.Barrier(len(asks))
    answers: list[tuple[int, float]] = [(0, 0.0)] * len(asks)

    def one(n: int) -> None:
        method, path, form, who = asks[n]
        connection = http.client.HTTPConnection(str(host.hostname), host.port, timeout=60)
        headers: dict[str, str] = {}
        body = None
        if who is not None:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in who.cookies.items())
        if form is not None:
            body = urllib.parse.urlencode({**form, "csrf_token": who.token if who else ""})
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            connection.connect()
            gate.wait(timeout=60)
            started = time.perf_counter()
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            answers[n] = (response.status, (time.perf_counter() - started) * 1000)
        except (OSError, threading.BrokenBarrierError):
            answers[n] = (0, HEALTH_TIMEOUT_SECONDS * 1000)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(len(asks))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def signed_in(base: str, name: str) -> Browser:
    user = Browser(base)
    user.request("GET", "/signup")
    user.request("POST", "/signup", {"username": name, "password": PASSWORD})
    user.request("GET", "/account")
    return user


def password_flood(base: str, flood: int) -> tuple[list[float], list[float], list[int]]:
    """`flood` connections at once from one signed-in user, each posting a wrong password,
    half to /account/delete and half to /account/password: health and a signed-in
    reader's item page meanwhile, and the posts' statuses."""
    user = signed_in(base, "flooder")
    reader = signed_in(base, "reader")
    reader.request("GET", ITEM)
    cookie = "; ".join(f"{k}={v}" for k, v in reader.cookies.items())
    asks: list[tuple[str, str, dict[str, str] | None, Browser | None]] = []
    for n in range(flood):
        if n % 2:
            asks.append(("POST", "/account/delete", {"password": f"wrong {n} wrong"}, user))
        else:
            form = {"current_password": f"wrong {n} wrong", "new_password": f"new one {n} long"}
            asks.append(("POST", "/account/password", form, user))
    statuses: list[int] = []
    load = threading.Thread(target=lambda: statuses.extend(s for s, _ in at_once(base, asks)))
    health, page = health_during(base, load, (ITEM, cookie))  # type: ignore[misc]
    return health, page, statuses


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


def burst(
    base: str, user: Browser, reader: str, count: int = 500
) -> tuple[int, float, dict[int, int], list[float], list[float]]:
    """`count` requests at once from one client, mixed: 5xx answers, the slowest, the
    statuses counted, and health and a signed-in reader's item page (`reader`: the cookie)
    meanwhile."""
    kinds: list[tuple[str, str, dict[str, str] | None, Browser | None]] = [
        ("GET", "/", None, None),
        ("GET", "/items?q=gradient", None, None),
        ("GET", "/api/items/dropout", None, None),
        ("GET", ITEM, None, user),
        ("GET", "/dashboard", None, user),
        (
            "POST",
            "/account/password",
            {"current_password": "wrong", "new_password": "another pass"},
            user,
        ),
    ]
    asks = [kinds[n % len(kinds)] for n in range(count)]
    answers: list[tuple[int, float]] = []
    load = threading.Thread(target=lambda: answers.extend(at_once(base, asks)))
    health, page = health_during(base, load, (ITEM, reader))  # type: ignore[misc]
    statuses: dict[int, int] = {}
    for status, _ in answers:
        statuses[status] = statuses.get(status, 0) + 1
    errors = sum(n for status, n in statuses.items() if status >= 500 or status == 0)
    slowest = max((ms for _, ms in answers), default=0.0)
    return errors, slowest, statuses, health, page


def _flood_rows(base: str) -> dict[str, str]:
    quiet = health_checks(base, 3)
    flood, page, statuses = password_flood(base, 120)
    return {
        "health, quiet: p50 / p99 ms": f"{pct(quiet, 0.5):.1f} / {pct(quiet, 0.99):.1f}",
        "health during 120 wrong passwords at once: p50 / p99 / max ms": (
            f"{pct(flood, 0.5):.1f} / {pct(flood, 0.99):.1f} / {max(flood):.1f}"
        ),
        "signed-in item page meanwhile: p50 / p99 / max ms": (
            f"{pct(page, 0.5):.1f} / {pct(page, 0.99):.1f} / {max(page):.1f}"
        ),
        "the 120 wrong passwords": (
            f"{statuses.count(429)} refused 429, "
            f"{sum(s in (200, 303, 400, 403, 422) for s in statuses)} "
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
    reader = signed_in(base, "burst-reader")
    reader.request("GET", ITEM)
    cookie = "; ".join(f"{k}={v}" for k, v in reader.cookies.items())
    errors, slowest, counted, health, page = burst(base, signed_in(base, "burster"), cookie)
    return {
        "500 mixed requests at once: 5xx or unanswered, slowest ms": f"{errors}, {slowest:.0f}",
        "health during them: p50 / p99 / max ms": (
            f"{pct(health, 0.5):.1f} / {pct(health, 0.99):.1f} / {max(health):.1f}"
        ),
        "signed-in item page during them: p50 / p99 / max ms": (
            f"{pct(page, 0.5):.1f} / {pct(page, 0.99):.1f} / {max(page):.1f}"
        ),
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
    parser.add_argument("--hog", type=int, default=0, help="busy loops beside it all")
    args = parser.parse_args()
    with hog(args.hog):
        columns = {"this checkout": measure(ROOT, args.port, args.only)}
        if args.baseline:
            baseline = measure(args.baseline.resolve(), args.port + 1, args.only)
            columns = {"baseline": baseline, **columns}
    busy = f", {args.hog} busy loops beside it" if args.hog else ""
    print(
        f"\nBackprop's responsiveness under one client's load — {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}; server: backprop serve "
        f"(one uvicorn process), load from this machine{busy}\n"
    )
    names = list(columns)
    print("| measure | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    rows = list(dict.fromkeys(row for column in columns.values() for row in column))
    for row in rows:
        print(f"| {row} | " + " | ".join(columns[n].get(row, "-") for n in names) + " |")


if __name__ == "__main__":
    main()
