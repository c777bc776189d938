"""The trusted in-process runner: the same grading loop (runner.py) with the learner's side
in this process too. Only for code of ours (references, starters, mutants: the honesty
check in CI, and authors checking an exercise); a learner's code is graded only through the
jailed two-process path (sandbox/README.md, "Grading")."""

from __future__ import annotations

from collections.abc import Callable

from sandbox.grading.exercise import Exercise
from sandbox.grading.runner import Grading, grade
from sandbox.grading.solution import (
    SOLUTION_FILENAME,
    LocalSolution,
    load_source,
    solution_traceback,
)
from sandbox.protocol.grading import GradingReport, Mode, TestResult


def grade_in_process(
    exercise: Exercise,
    code: str,
    *,
    mode: Mode = Mode.SUBMIT,
    seed: int = 0,
    device: str = "cpu",
    on_result: Callable[[TestResult], None] = lambda r: None,
) -> GradingReport:
    """Grade `code` (one of our own solutions) against `exercise` in this process, the
    learner's side on `device` (the reference stays on the CPU, as in the jailed grader)."""
    reference = LocalSolution.from_source(exercise.reference, "reference.py")
    problem = None
    try:
        learner = LocalSolution(load_source(code, SOLUTION_FILENAME), device=device)
    except Exception as exc:
        problem = "Your code did not load:\n" + solution_traceback(exc)
        learner = LocalSolution({})
    grading = Grading(
        tests=exercise.tests(),
        learner=learner,
        reference=reference,
        learner_source=code,
        tolerances=exercise.config.tolerances,
        forbid=exercise.config.forbid,
        forbid_reason=exercise.config.forbid_reason,
        side_effects=exercise.config.side_effects,
        may_alias=exercise.config.may_alias,
        inputs_without_grad=exercise.config.inputs_without_grad,
        seed=seed,
        mode=mode,
        performance=exercise.config.performance,
    )
    return grade(grading, on_result, problem)
