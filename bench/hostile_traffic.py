"""What one misbehaving client costs everyone else, printed as a table:

- a flood of wrong passwords from one signed-in user (password changes and sign-ins, 8 at a
  time): the latency of GET /api/health from another client meanwhile, beside its latency
  on a quiet server, in the same run;
- one POST /api/runs with a 300 MiB body: how much the web process's memory grows;
- a run printing in a tight loop (needs root, for the sandbox): how many output events
  reach the browser, and whether they add up to the stored output.

    .venv/bin/python bench/hostile_traffic.py [--port 8767] [--flood 120]

Starts its own server (`backprop serve`) over a private data folder.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import re
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from served import served

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "a long and honest passphrase"
TIGHT_LOOP = "for i in range(200000):\n    print(i)\n"


class Browser:
    """Cookies and the CSRF token, as a page would hold them."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies: dict[str, str] = {}
        self.token = ""

    def request(
        self, method: str, path: str, data: dict[str, str] | None = None
    ) -> tuple[int, str, dict[str, str]]:
        url = urllib.parse.urlsplit(self.base)
        connection = http.client.HTTPConnection(str(url.hostname), url.port, timeout=60)
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if data is not None:
            body = urllib.parse.urlencode({**data, "csrf_token": self.token})
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        text = response.read().decode("utf-8", "replace")
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        found = re.search(r'name="csrf-token" content="([^"]+)"', text)
        if found:
            self.token = found.group(1)
        connection.close()
        return response.status, text, dict(response.getheaders())


def health_latencies(base: str, seconds: float) -> list[float]:
    """GET /api/health back to back for `seconds`: each one's milliseconds."""
    times = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        with urllib.request.urlopen(f"{base}/api/health", timeout=60) as response:
            response.read()
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(0.02)
    return times


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def rss_mb(pid: int) -> float:
    """Resident memory of the process listening (the web server), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def web_pid(port: int) -> int:
    out = subprocess.run(["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True)
    found = re.search(r"pid=(\d+)", out.stdout)
    if not found:
        sys.exit(f"no process listens on port {port}")
    return int(found.group(1))


def password_flood(base: str, flood: int) -> dict[str, float]:
    quiet = health_latencies(base, 3)
    user = Browser(base)
    user.request("GET", "/signup")
    user.request("POST", "/signup", {"username": "flooder", "password": PASSWORD})
    user.request("GET", "/account")
    statuses: list[int] = []

    def wrong(n: int) -> None:
        form = {"current_password": f"wrong {n} wrong", "new_password": f"new one {n} long"}
        statuses.append(user.request("POST", "/account/password", form)[0])

    result: dict[str, list[float]] = {}
    watcher = threading.Thread(target=lambda: result.update(busy=health_latencies(base, 6)))
    watcher.start()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(wrong, range(flood)))
    watcher.join()
    busy = result["busy"]
    return {
        "quiet_p50": pct(quiet, 0.5),
        "quiet_p99": pct(quiet, 0.99),
        "busy_p50": pct(busy, 0.5),
        "busy_p99": pct(busy, 0.99),
        "busy_max": max(busy),
        "refused_429": statuses.count(429),
        "checked": len(statuses) - statuses.count(429),
    }


def body_flood(base: str, port: int, megabytes: int = 300) -> dict[str, float]:
    pid = web_pid(port)
    before = rss_mb(pid)
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(str(url.hostname), url.port, timeout=120)
    chunk = b"#" * (1 << 20)
    status = 0
    try:
        connection.putrequest("POST", "/api/runs")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Transfer-Encoding", "chunked")  # no length to refuse up front
        connection.endheaders()
        for _ in range(megabytes):
            connection.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        connection.send(b"0\r\n\r\n")
        status = connection.getresponse().status
    except (BrokenPipeError, ConnectionResetError):
        status = connection.getresponse().status if connection.sock else 413
    return {"status": status, "rss_before": before, "rss_after": rss_mb(pid)}


def output_flood(base: str) -> dict[str, float] | None:
    body = json.dumps({"code": TIGHT_LOOP, "backend": "cpu"}).encode()
    request = urllib.request.Request(
        f"{base}/api/runs", data=body, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            started = json.load(response)
    except urllib.error.HTTPError:
        return None  # no sandbox here
    owner = f"?token={started['token']}"
    events, text, stored = 0, [], ""
    with urllib.request.urlopen(f"{base}/api/runs/{started['id']}/events{owner}") as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "stdout":
                events += 1
                text.append(json.loads(line[6:])["data"])
            elif line.startswith("data: ") and kind == "result":
                stored = json.loads(line[6:])["stdout"]
                break
    return {"events": events, "bytes": len(stored), "equal": float("".join(text) == stored)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8767)
    parser.add_argument("--flood", type=int, default=120)
    args = parser.parse_args()
    not_starting = lambda health: health["sandbox"]["state"] != "starting"  # noqa: E731
    with served(args.port, {"SECRET_KEY": "bench"}, not_starting) as base:
        passwords = password_flood(base, args.flood)
        bodies = body_flood(base, args.port)
        output = output_flood(base)
    print(f"\nBackprop under hostile traffic — {platform.machine()}, {os.cpu_count()} CPUs\n")
    print("| measure | figure |")
    print("|---|---|")
    print(
        f"| GET /api/health, quiet server | p50 {passwords['quiet_p50']:.1f} ms, "
        f"p99 {passwords['quiet_p99']:.1f} ms |"
    )
    print(
        f"| GET /api/health during {args.flood} wrong passwords (8 at a time) | "
        f"p50 {passwords['busy_p50']:.1f} ms, p99 {passwords['busy_p99']:.1f} ms, "
        f"max {passwords['busy_max']:.1f} ms |"
    )
    print(
        f"| of those wrong passwords | {passwords['checked']:.0f} checked, "
        f"{passwords['refused_429']:.0f} refused with 429 |"
    )
    print(
        f"| POST /api/runs with a 300 MiB chunked body | HTTP {bodies['status']:.0f}; web "
        f"process {bodies['rss_before']:.0f} → {bodies['rss_after']:.0f} MiB |"
    )
    if output is None:
        print("| tight print loop | not measured: no sandbox on this host |")
    else:
        print(
            f"| {TIGHT_LOOP.splitlines()[0]} print(i) | {output['events']:.0f} stdout events for "
            f"{output['bytes']:.0f} bytes; events add up to the stored output: "
            f"{'yes' if output['equal'] else 'NO'} |"
        )


if __name__ == "__main__":
    main()
