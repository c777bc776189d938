"""What a library search costs, measured in process: the search itself (`find`, as the
library calls it) and the whole answer to the search box (`GET /items?q=…` as htmx asks for
it, the results fragment rendered). Prints a table per kind of query. A query's first search
after an import is worked out and kept (app/library/content_cache.py); the ones after it,
as search-as-you-type repeats them, are answered from what was kept: both are shown.

    .venv/bin/python bench/search.py [--rounds 30]
    .ci/postgres .venv/bin/python bench/search.py      # the same on PostgreSQL

SQLite searches with FTS5; PostgreSQL with the ranked ILIKE fallback (app/library/search.py).
The database is a fresh one with all content (as bench/run_admission.py makes it). Queries
take turns round by round, after the first round (the first searches), so a noisy moment
spreads over all.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.db import make_engine
from app.library.items import ItemFilter
from app.library.search import find
from bench.run_admission import app_in_process

# Queries as learners type them, by kind.
QUERIES = {
    "one word": ["dropout", "adam", "lstm", "warmup", "he"],
    "two or three words": ["vanishing gradients", "mixed precision", "batchnorm vs layernorm"],
    "typos": ["dropuot", "vanishng gradeints", "mixed precison"],
    "few hold every word": ["memory leak gpu", "cuda out of memory", "torch compile graph break"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    with app_in_process() as (client, url):
        engine = make_engine(url)
        found: dict[str, list[float]] = {q: [] for qs in QUERIES.values() for q in qs}
        page: dict[str, list[float]] = {q: [] for q in found}
        first: dict[str, float] = {}
        hits: dict[str, int] = {}
        with engine.connect() as connection:
            for round_ in range(args.rounds + 1):
                for query in found:
                    started = time.perf_counter()
                    hits[query] = len(find(connection, ItemFilter(q=query)).hits)
                    searched = time.perf_counter()
                    answer = client.get("/items", params={"q": query}, headers={"HX-Request": "1"})
                    answered = time.perf_counter()
                    if answer.status_code != 200:
                        raise SystemExit(f"GET /items?q={query} answered {answer.status_code}")
                    if not round_:
                        first[query] = (searched - started) * 1000
                    else:
                        found[query].append((searched - started) * 1000)
                        page[query].append((answered - searched) * 1000)
        engine.dispose()
    backend = make_url(url).get_backend_name()
    print(f"Library search, {args.rounds} rounds, one at a time, in process ({backend})")
    print(
        "| queries | hits each | first find, ms each | find p50 ms | find p95 ms "
        "| page p50 ms | page p95 ms |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    for kind, queries in QUERIES.items():
        finds = sorted(t for q in queries for t in found[q])
        pages = sorted(t for q in queries for t in page[q])
        counts = "/".join(str(hits[q]) for q in queries)
        firsts = "/".join(f"{first[q]:.1f}" for q in queries)
        print(
            f"| {kind} | {counts} | {firsts} | {statistics.median(finds):.2f} | {p95(finds):.2f} "
            f"| {statistics.median(pages):.2f} | {p95(pages):.2f} |"
        )


def p95(sorted_times: list[float]) -> float:
    return sorted_times[int(len(sorted_times) * 0.95)]


if __name__ == "__main__":
    main()
