"""What the exercise insight costs as submissions pile up: `exercise_stats` (one ordered read
of the runs, the hint and reveal counts, and the code of the flag's candidates only) and the
whole admin page (GET /admin/exercises), with the programs' shapes cached, and the first call
after new runs, which parses their code; beside them, the read the design avoids: every
run's code and report in the one pass. Prints a table, one row per size.

    .venv/bin/python bench/exercise_stats.py [--sizes 1000 5000 20000] [--rounds 5]
    .ci/postgres .venv/bin/python bench/exercise_stats.py      # the same on PostgreSQL

Submissions are made up as learners make them: per person and exercise a run of the visible
tests, then one to six submits with a 16-test report, most ending in a pass; one trail in
fifty resubmits the same code after a failed hidden test (a flag). Each size adds to the last.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, insert
from sqlalchemy import select as core_select
from sqlalchemy.engine import Engine, make_url
from sqlmodel import Session, col

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.accounts import accounts
from app.db import make_engine
from app.exercises.stats import exercise_stats
from app.models import Exercise, HintView, Run
from bench.run_admission import app_in_process
from tests.support.forms import sign_up

TESTS = [(f"test {i}", "values" if i < 8 else "edge cases", i >= 3) for i in range(16)]
START = datetime(2026, 1, 5, tzinfo=UTC)
CODE = "import torch\n\n\ndef f(x, dim=-1):\n" + "    x = x + 0  # a step\n" * 50


def report(failing: set[str]) -> str:
    tests = [
        {
            "name": name,
            "category": category,
            "hidden": hidden,
            "status": "fail" if name in failing else "pass",
            "message": "case 2 of 4: max abs error 3.1e-02 at (1, 7), tolerance 1e-05"
            * bool(name in failing),
            "ms": 12,
        }
        for name, category, hidden in TESTS
    ]
    return json.dumps({"verdict": "failed" if failing else "passed", "tests": tests})


def add_runs(engine: Engine, count: int, slugs: list[str], rng: random.Random) -> int:
    """About `count` more submissions, by new people; how many were written."""
    rows: list[dict[str, Any]] = []
    hints: list[dict[str, Any]] = []
    person = 0
    with Session(engine) as session:
        person = session.execute(core_select(func.count()).select_from(Run)).scalar_one()
    while len(rows) < count:
        person += 1
        slug, at = rng.choice(slugs), START + timedelta(minutes=person)
        visitor = f"p{person}"
        flaky = rng.random() < 0.02
        submits = rng.randint(1, 6)
        code = CODE + f"# {person}\n"
        trail: list[tuple[str, set[str], str]] = [("run", set(), code)]
        for n in range(submits):
            last = n == submits - 1
            failing = set() if last and rng.random() < 0.7 else {rng.choice(TESTS[3:])[0]}
            if not flaky:
                code = code + f"y{n} = {n}\n"  # an edit between submits
            trail.append(("submit", failing, code))
        if flaky:
            trail.append(("submit", set(), code))
        for minutes, (mode, failing, text) in enumerate(trail):
            rows.append(
                {
                    "id": f"b{person:08d}{minutes:04d}",
                    "visitor": visitor,
                    "code": text,
                    "code_sha256": hashlib.sha256(text.encode()).hexdigest(),
                    "code_bytes": len(text),
                    "backend_requested": "cpu",
                    "status": "done",
                    "created_at": at + timedelta(minutes=minutes * 3),
                    "exercise_slug": slug,
                    "grading_mode": mode,
                    "grading_verdict": "failed" if failing else "passed",
                    "grading": report(failing),
                }
            )
        if rng.random() < 0.3:
            hints.append(
                {
                    "exercise_slug": slug,
                    "visitor": visitor,
                    "hint_index": 0,
                    "level": "concept",
                    "category": "values",
                    "shown_at": at,
                }
            )
    with Session(engine) as session:
        session.execute(insert(Run), rows)
        if hints:
            session.execute(insert(HintView), hints)
        session.commit()
    return len(rows)


def timed(action: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rng = random.Random(21)
    with app_in_process() as (client, url):
        engine = make_engine(url)
        sign_up(client, "author")
        with Session(engine) as session:
            accounts.set_admin(session, username="author", admin=True)
            session.commit()
            slugs = list(session.execute(core_select(col(Exercise.slug))).scalars())

        def stats() -> None:
            with Session(engine) as session:
                exercise_stats(session)

        def everything() -> None:
            with Session(engine) as session:
                session.execute(
                    core_select(col(Run.id), col(Run.code), col(Run.grading))
                    .where(col(Run.exercise_slug).is_not(None))
                    .order_by(col(Run.created_at))
                ).all()

        def page() -> None:
            assert client.get("/admin/exercises").status_code == 200

        print(f"Exercise insight, median of {args.rounds} ({make_url(url).get_backend_name()})")
        print(
            "| runs | flagged | exercise_stats, new runs' shapes ms | exercise_stats ms "
            "| GET /admin/exercises ms | code + reports of every run ms |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        total = 0
        for size in args.sizes:
            total += add_runs(engine, size - total, slugs, rng)
            started = time.perf_counter()
            with Session(engine) as session:
                flagged = sum(s.flagged for s in exercise_stats(session))
            cold = (time.perf_counter() - started) * 1000
            print(
                f"| {total} | {flagged} | {cold:.0f} | {timed(stats, args.rounds):.0f} "
                f"| {timed(page, args.rounds):.0f} | {timed(everything, args.rounds):.0f} |"
            )


if __name__ == "__main__":
    main()
