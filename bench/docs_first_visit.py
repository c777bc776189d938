"""How long the first visit of /docs takes on a fresh server: the page, the API's schema and
Swagger UI's script and style, fetched as a browser does (brotli accepted), right when the
server answers its health check and again on another fresh server a few seconds later.

    python bench/docs_first_visit.py [--against ../checkout-before] [--after-seconds 10]

With --against, the same is measured on another checkout, the two taking turns."""

from __future__ import annotations

import argparse
import re
import sys
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from served import ROOT, served


def fetch(url: str) -> int:
    request = urllib.request.Request(url, headers={"Accept-Encoding": "br, gzip"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return len(response.read())


def first_visit(base: str) -> float:
    """Seconds from asking for /docs until it and everything it loads have arrived."""
    start = time.perf_counter()
    with urllib.request.urlopen(f"{base}/docs", timeout=120) as response:
        page = response.read().decode()
    assets = re.findall(r"(?:src|href)=['\"](/static/[^'\"]+)['\"]", page)
    for path in ["/openapi.json", *assets]:
        fetch(base + path)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, help="another checkout, measured in turn")
    parser.add_argument("--after-seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args()
    checkouts = [("this checkout", ROOT)]
    if args.against:
        checkouts.insert(0, (f"{args.against.name}", args.against.resolve()))
    ready = lambda health: health["status"] == "ok"  # noqa: E731
    rows = []
    for turn in range(1, args.rounds + 1):
        for name, root in checkouts:
            for wait in (0.0, args.after_seconds):
                with served(args.port, {"RUN_QUEUE": "fake"}, ready, root=root) as base:
                    time.sleep(wait)
                    rows.append((name, turn, wait, first_visit(base)))
    print("| checkout | turn | visited after ready (s) | first visit of /docs (s) |")
    print("|---|---:|---:|---:|")
    for name, turn, wait, seconds in rows:
        print(f"| {name} | {turn} | {wait:.0f} | {seconds:.2f} |")


if __name__ == "__main__":
    main()
