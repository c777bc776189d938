"""Check an exercise folder while writing it: every test's result for the reference (five
seeds), the starter and each mutant (shown for the first seed, caught on all five), with the
trusted in-process runner.

    python -m sandbox.grading.check content/exercises/<slug> [--seed N]"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sandbox.grading.exercise import ExerciseError, load
from sandbox.grading.trusted import grade_in_process
from sandbox.protocol.grading import GradingReport, GradingVerdict, TestStatus


def _show(label: str, report: GradingReport) -> None:
    print(f"{label}: {report.verdict.value}, score {report.score}")
    for test in report.tests:
        if test.status is not TestStatus.PASS:
            shown = "hidden" if test.hidden else "visible"
            print(f"    {test.status.value:7} [{shown}] {test.name}: {test.message[:400]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        exercise = load(args.folder)
    except ExerciseError as exc:
        print(f"not a valid exercise: {exc}", file=sys.stderr)
        return 2
    honest = True
    for seed in range(args.seed, args.seed + 5):
        report = grade_in_process(exercise, exercise.reference, seed=seed)
        _show(f"reference, seed {seed}", report)
        honest &= report.verdict is GradingVerdict.PASSED
    starter = grade_in_process(exercise, exercise.starter, seed=args.seed)
    _show("starter", starter)
    honest &= starter.verdict is not GradingVerdict.PASSED
    # A mutant must fail a hidden test on every one of the five seeds, as CI asks
    # (tests/grading/test_honesty.py): one seed alone once called a suite honest that CI did not.
    for name, code in exercise.mutants.items():
        escaped = []
        for seed in range(args.seed, args.seed + 5):
            report = grade_in_process(exercise, code, seed=seed)
            if seed == args.seed:
                _show(f"mutant {name}", report)
            if not any(t.hidden and t.status is not TestStatus.PASS for t in report.tests):
                escaped.append(seed)
        if escaped:
            print(f"    NOT CAUGHT by any hidden test on seeds {escaped}: {name}")
        honest &= not escaped
    print("honest" if honest else "NOT honest: see above")
    return 0 if honest else 1


if __name__ == "__main__":
    sys.exit(main())
