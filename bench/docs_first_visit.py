"""How long the first visit of /docs takes on a fresh server, as a browser makes it: the
page, then Swagger UI's stylesheet and script side by side (brotli accepted), then the API's
schema, right when the server answers its health check; then a second visit on the same
server, once what the first started in the background is done (a few seconds later).

    .venv/bin/python bench/docs_first_visit.py [--against ../checkout-before] [--rounds 2]

With --against, the same is measured on another checkout (its app code, this Python), the two
taking turns, each on a fresh `backprop serve` over a private data folder (bench/served.py).
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from served import ROOT, served

SCHEMA = "/openapi.json"


def fetch(url: str, accept: str = "br, gzip") -> tuple[float, int, str, bytes]:
    """Seconds to fetch `url` whole, the bytes that came, how they were encoded, and the
    body (as it came)."""
    request = urllib.request.Request(url, headers={"Accept-Encoding": accept})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=300) as response:
        body = response.read()
        encoding = response.headers.get("Content-Encoding") or "none"
    return time.perf_counter() - started, len(body), encoding, body


def visit(base: str) -> dict[str, tuple[float, int, str, bytes]]:
    """Each request of one visit of /docs (and "all": the whole visit's seconds)."""
    started = time.perf_counter()
    page = fetch(f"{base}/docs", accept="identity")  # a page of 1 KB: its links read as is
    html = page[3].decode()
    assets = re.findall(r"(?:src|href)=['\"](/static/[^'\"]+\.(?:js|css))", html)
    with ThreadPoolExecutor(len(assets)) as pool:
        fetched = dict(zip(assets, pool.map(lambda a: fetch(base + a), assets), strict=True))
    times = {"/docs": page, **fetched, SCHEMA: fetch(base + SCHEMA)}
    times["all"] = (time.perf_counter() - started, 0, "", b"")
    return times


def short(path: str) -> str:
    return Path(path.split("?")[0]).name if path.startswith("/static/") else path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout, measured in turn")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--second-after", type=float, default=15.0, help="seconds")
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()
    checkouts = [("this checkout", ROOT)]
    if args.against:
        checkouts.insert(0, (args.against.name, args.against.resolve()))
    rows = []
    for turn in range(1, args.rounds + 1):
        for name, root in checkouts:
            with served(args.port, {"RUN_QUEUE": "fake"}, lambda h: h["status"] == "ok", root):
                first = visit(f"http://127.0.0.1:{args.port}")
                time.sleep(args.second_after)  # what the first visit set going, done
                second = visit(f"http://127.0.0.1:{args.port}")
            rows += [(name, turn, "first", first), (name, turn, "second", second)]
    print(f"{platform.machine()}, Python {platform.python_version()}, {time.strftime('%F')}")
    paths = [p for p in rows[0][3] if p != "all"]
    print(f"| checkout | turn | visit | {' | '.join(short(p) + ' ms' for p in paths)} | whole s |")
    print(f"|---|---:|---|{'---:|' * (len(paths) + 1)}")
    for name, turn, which, times in rows:
        cells = [
            f"{times[p][0] * 1000:,.0f} ({times[p][1] // 1024} KiB {times[p][2]})" for p in paths
        ]
        print(f"| {name} | {turn} | {which} | {' | '.join(cells)} | {times['all'][0]:.2f} |")


if __name__ == "__main__":
    main()
