"""What the exercises add to start-up: the import's exercise step (`sync_exercises`) on a
fresh SQLite database (the first start: every exercise read, rendered and written) and on
one already up to date (every later start: every folder read and hashed, nothing written),
beside the items' step for scale. The issue's budget for the exercises is 1 s.

    .venv/bin/python bench/exercise_import.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlmodel import Session

from app import migrate
from app.db import make_engine
from app.importer import load
from app.importer.exercises import sync_exercises

ROOT = Path(__file__).resolve().parent.parent
CONTENT = ROOT / "content"


def one_start(database: Path) -> tuple[float, float]:
    """Seconds of the items' import and of the exercises' sync, as start-up runs them."""
    engine = make_engine(f"sqlite:///{database}")
    try:
        migrate.upgrade(engine)
        started = time.perf_counter()
        load._import_items(engine, CONTENT)
        items = time.perf_counter() - started
        started = time.perf_counter()
        with Session(engine) as session:
            sync_exercises(session, CONTENT)
            session.commit()
        return items, time.perf_counter() - started
    finally:
        engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    first: list[tuple[float, float]] = []
    later: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            database = Path(tmp) / f"round{n}.db"
            first.append(one_start(database))
            later.append(one_start(database))
    count = sum(1 for _ in CONTENT.glob("exercises/*/exercise.yml"))
    print(
        f"{count} exercises; median of {args.rounds} rounds; {platform.machine()}, "
        f"Python {platform.python_version()}\n"
    )
    print("| start | items s | exercises s |")
    print("|---|---:|---:|")
    for kind, found in (("first start", first), ("later start", later)):
        items = statistics.median(t for t, _ in found)
        exercises = statistics.median(e for _, e in found)
        print(f"| {kind} | {items:.3f} | {exercises:.3f} |")


if __name__ == "__main__":
    main()
