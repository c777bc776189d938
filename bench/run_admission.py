"""What starting a run costs the web process, measured in process: POST /api/runs answered by
the app with scripted runs (RUN_QUEUE=fake, nothing executes), the rate limits and run caps
checked on the way. Prints a table.

    .venv/bin/python bench/run_admission.py [--requests 400]
    .ci/postgres .venv/bin/python bench/run_admission.py      # the same on PostgreSQL

The database is a fresh one with all content: a SQLite file in a temporary folder, or a new
database on the server DATABASE_URL names when that is PostgreSQL. Each request is timed
from the call to the answer (202), one at a time, after 50 unmeasured ones; each run's
events are then read to its end, so no run is still in flight when the next starts.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.main import create_app  # noqa: E402
from app.settings import RunQueueKind, Settings  # noqa: E402

WARM_UP = 50


@contextmanager
def database(folder: Path) -> Iterator[str]:
    """A new, empty database for the app to migrate and import into: its URL."""
    given = os.environ.get("DATABASE_URL", "")
    if not given.startswith("postgresql"):
        yield f"sqlite:///{folder / 'bench.db'}"
        return
    server = make_url(given)
    url = server.set(database=f"backprop_bench_{os.getpid()}")
    admin = create_engine(server.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f"CREATE DATABASE {url.database}"))
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f"DROP DATABASE {url.database} WITH (FORCE)"))
        admin.dispose()


@contextmanager
def app_in_process(**settings: Any) -> Iterator[tuple[TestClient, str]]:
    """The app over a fresh database (`database`), started, with scripted runs and `settings`:
    a client of it, and the database's URL."""
    folder = Path(tempfile.mkdtemp(prefix="backprop-bench-"))
    with database(folder) as url:
        chosen = Settings(
            database_url=url,
            data_dir=folder / "data",
            secret_key="bench",
            run_queue=RunQueueKind.fake,
            **settings,
        )
        with TestClient(create_app(chosen)) as client:
            yield client, url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    with app_in_process(runs_per_minute=10**6, runs_per_minute_per_client=10**6) as (client, url):
        times = [one_run(client) for _ in range(WARM_UP + args.requests)][WARM_UP:]
    times_ms = sorted(t * 1000 for t in times)
    engine = make_url(url).get_backend_name()
    p50 = statistics.median(times_ms)
    p90 = times_ms[int(len(times_ms) * 0.9)]
    p99 = times_ms[int(len(times_ms) * 0.99)]
    print(f"POST /api/runs, {len(times_ms)} requests, one at a time, in process ({engine})")
    print("| p50 ms | p90 ms | p99 ms |")
    print("|---:|---:|---:|")
    print(f"| {p50:.2f} | {p90:.2f} | {p99:.2f} |")


def one_run(client: TestClient) -> float:
    """Seconds POST /api/runs took; the run is then followed to its end."""
    started = time.perf_counter()
    answer = client.post("/api/runs", json={"code": "print('x')"})
    took = time.perf_counter() - started
    if answer.status_code != 202:
        sys.exit(f"POST /api/runs answered {answer.status_code}: {answer.text}")
    run_id = answer.json()["id"]
    token = {"X-Run-Token": answer.json()["token"]}
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=token) as events:
        for line in events.iter_lines():
            if line.startswith("event: result"):
                break
    return took


if __name__ == "__main__":
    main()
