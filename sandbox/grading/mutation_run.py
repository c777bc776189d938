"""Running the hidden suite on every automatic mutant (mutate.py), and keeping the result.

    python -m sandbox.grading.mutation_run [slug ...] [--jobs N] [--force]

A mutant is killed when a test of the suite fails on each of seeds 0-4 (a learner's
submission gets a seed the worker draws: a mutant caught on some seeds only passes for some
learners); the tests run in order and stop at the first that fails. Visible tests count as
hidden ones do here, since a submission must pass both (the authored mutants are held to
more: a hidden test must catch each, tests/grading/test_honesty.py); the performance test,
which times rather than checks, does not. A mutant that runs past its time
counts as killed (the grader would time it out). Mutants run in a pool of processes, each in
the trusted in-process runner, with a wall-clock alarm.

Results are cached in content/exercises/<slug>/mutation.json, keyed by a digest of what they
depend on (reference.py, tests.py, exercise.yml, equivalent_mutants.yml, the mutator's
version): a normal run (and CI) reruns only the exercises whose digest changed. Mutants that
no test can kill because they compute the same function are listed, each with a one-line
reason, in equivalent_mutants.yml, reviewed by hand."""

from __future__ import annotations

import argparse
import datetime
import functools
import hashlib
import json
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import yaml

from sandbox.grading import mutate

SEEDS = (0, 1, 2, 3, 4)
TARGET = 0.95
MUTANT_SECONDS = 60
RESULT_FILE = "mutation.json"
EQUIVALENT_FILE = "equivalent_mutants.yml"
DIGEST_FILES = ("reference.py", "tests.py", "exercise.yml", EQUIVALENT_FILE)


def digest(folder: Path) -> str:
    h = hashlib.sha256(f"mutate v{mutate.VERSION}\0".encode())
    for name in DIGEST_FILES:
        path = folder / name
        h.update(name.encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"")
    return h.hexdigest()


def equivalents(folder: Path) -> dict[str, str]:
    """equivalent_mutants.yml: [{id, why}], reviewed by hand."""
    path = folder / EQUIVALENT_FILE
    if not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    if not isinstance(data, list) or not all(
        isinstance(e, dict) and set(e) == {"id", "why"} and str(e["why"]).strip() for e in data
    ):
        raise ValueError(f"{path}: a list of {{id, why}}, each with its reason")
    return {str(e["id"]): str(e["why"]) for e in data}


class _TimeUp(BaseException):
    """Not an Exception: the in-process solution turns any Exception from a call into
    the learner's error (LocalSolution.request), which would swallow the one-shot alarm
    and leave a mutant that never returns looping, unwatched, on the next seed."""


def _alarm(signum: int, frame: Any) -> None:
    raise _TimeUp


@functools.cache
def _suite(folder: str) -> tuple[Any, list[Any]]:
    """The exercise and its judging tests, read once per pool process (not once a mutant:
    loading applies every patch and runs tests.py twice)."""
    from sandbox.grading.exercise import load

    exercise = load(Path(folder))
    return exercise, [t for t in exercise.tests() if t.kind != "performance"]


def judge(folder: str, source: str) -> tuple[str, int | None]:
    """In a pool process: ("killed", None), ("timeout", None) or ("survived", seed)."""
    import torch

    from sandbox.grading.runner import Grading, run_test
    from sandbox.grading.solution import LocalSolution, load_source
    from sandbox.protocol.grading import TestStatus

    torch.set_num_threads(1)
    exercise, tests = _suite(folder)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(MUTANT_SECONDS)
    try:
        try:
            learner = LocalSolution(load_source(source, "solution.py"))
        except Exception:
            return "killed", None
        reference = LocalSolution.from_source(exercise.reference, "reference.py")
        for seed in SEEDS:
            grading = Grading(
                tests=tests,
                learner=learner,
                reference=reference,
                learner_source=source,
                tolerances=exercise.config.tolerances,
                forbid=exercise.config.forbid,
                seed=seed,
                forbid_reason=exercise.config.forbid_reason,
                side_effects=exercise.config.side_effects,
                may_alias=exercise.config.may_alias,
                performance=exercise.config.performance,
            )
            if not any(run_test(grading, t).status is not TestStatus.PASS for t in tests):
                return "survived", seed
        return "killed", None
    except _TimeUp:
        return "timeout", None
    except Exception:  # the grader's side failed on this mutant: it did not pass
        return "killed", None
    finally:
        signal.alarm(0)


def prove(folder: Path, jobs: int) -> dict[str, Any]:
    """Run every mutant of one exercise; its record (also written to mutation.json)."""
    made = mutate.mutants((folder / "reference.py").read_text(encoding="utf-8"))
    equivalent = equivalents(folder)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        verdicts = list(pool.map(judge, [str(folder)] * len(made), [m.source for m in made]))
    survived = []
    for mutant, (verdict, seed) in zip(made, verdicts, strict=True):
        if verdict == "survived" and mutant.id not in equivalent:
            survived.append({"id": mutant.id, "operator": mutant.operator, "seed": seed})
    marked = [m.id for m in made if m.id in equivalent]
    stale = sorted(set(equivalent) - {m.id for m in made})
    killed = sum(
        1
        for m, (v, _) in zip(made, verdicts, strict=True)
        if v != "survived" and m.id not in equivalent
    )
    judged = len(made) - len(marked)
    record = {
        "digest": digest(folder),
        "made": len(made),
        "killed": killed,
        "equivalent": len(marked),
        "score": round(killed / judged, 4) if judged else 1.0,
        "survived": survived,
        "stale_equivalents": stale,
        "seeds": list(SEEDS),
        "proven": datetime.date.today().isoformat(),
    }
    (folder / RESULT_FILE).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def cached(folder: Path) -> dict[str, Any] | None:
    """The stored record, when it is current."""
    path = folder / RESULT_FILE
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record if record.get("digest") == digest(folder) else None


TABLE_START = "<!-- suite-proof:start (python -m sandbox.grading.mutation_run --table) -->"
TABLE_END = "<!-- suite-proof:end -->"


def table(root: Path) -> str:
    """The suites' proof, one row per exercise, from each exercise's mutation.json."""
    rows = [
        "| exercise | alternatives | authored bugs | automatic mutants | killed | equivalent "
        "| score | seeds |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        path = folder / RESULT_FILE
        record = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        alternatives = len(list(folder.glob("alternatives/*.py")))
        authored = len(list(folder.glob("mutants/*.patch")))
        if not record:
            rows.append(f"| {folder.name} | {alternatives} | {authored} | - | - | - | - | - |")
            continue
        seeds = record["seeds"]
        rows.append(
            f"| {folder.name} | {alternatives} | {authored} | {record['made']} "
            f"| {record['killed']} | {record['equivalent']} | {record['score']:.1%} "
            f"| {seeds[0]}-{seeds[-1]} |"
        )
    return "\n".join(rows) + "\n"


def write_table(readme: Path, root: Path) -> bool:
    """Put the table between its markers in `readme`; whether it changed."""
    text = readme.read_text(encoding="utf-8")
    head, start, rest = text.partition(TABLE_START)
    _, end, tail = rest.partition(TABLE_END)
    if not start or not end:
        raise ValueError(f"{readme}: the markers {TABLE_START!r} ... {TABLE_END!r} are missing")
    new = head + start + "\n" + table(root) + end + tail
    readme.write_text(new, encoding="utf-8")
    return new != text


def show(folder: Path, mutant_id: str) -> int:
    """The mutant's diff against the reference (both as the syntax tree prints them)."""
    import ast
    import difflib

    reference = (folder / "reference.py").read_text(encoding="utf-8")
    found = [m for m in mutate.mutants(reference) if m.id == mutant_id]
    if not found:
        print(f"no mutant {mutant_id!r} in {folder.name}", file=sys.stderr)
        return 2
    before = ast.unparse(ast.parse(reference)).splitlines(keepends=True)
    for mutant in found:
        after = mutant.source.splitlines(keepends=True)
        print("".join(difflib.unified_diff(before, after, "reference.py", mutant.id, n=3)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sandbox.grading.mutation_run")
    parser.add_argument("slugs", nargs="*")
    parser.add_argument("--root", type=Path, default=Path("content/exercises"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--force", action="store_true", help="rerun even where cached")
    parser.add_argument("--show", metavar="ID", help="print one mutant of one exercise as a diff")
    parser.add_argument("--table", action="store_true", help="write content/README.md's table")
    args = parser.parse_args(argv)
    if args.show:
        return show(args.root / args.slugs[0], args.show)
    folders = [args.root / s for s in args.slugs] or sorted(
        p for p in args.root.iterdir() if p.is_dir() and not p.name.startswith(".")
    )
    below = 0
    for folder in folders:
        record = None if args.force else cached(folder)
        state = "cached"
        if record is None:
            record, state = prove(folder, args.jobs), "proven"
        judged = record["made"] - record["equivalent"]
        print(
            f"{folder.name:28} {state:7} made {record['made']:4} killed {record['killed']:4} "
            f"equivalent {record['equivalent']:3} score {record['killed']}/{judged} "
            f"= {record['score']:.1%}",
            flush=True,
        )
        below += record["score"] < TARGET
    if args.table:
        write_table(args.root.parent / "README.md", args.root)
    return 0 if below == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
