"""Running an exercise's declared tests against a learner, the reference beside it: the one
grading loop, used by the jailed grader (grader.py) and by the trusted in-process runner
(trusted.py) alike."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from sandbox.grading import (
    api_rules,
    case_values,
    cases,
    checks,
    compare,
    defaults,
    exactness,
    perf,
    side_effects,
)
from sandbox.grading.compare import Comparison, Mismatch, Tolerance, norm_ratio
from sandbox.grading.draws import Draw, case_seed
from sandbox.grading.dsl import CATEGORY_WEIGHTS, Case, Test
from sandbox.grading.gradcheck import check_gradients
from sandbox.grading.solution import GraderFault, LearnerError, LocalSolution, Solution
from sandbox.protocol.grading import (
    GradingReport,
    GradingVerdict,
    Mode,
    TestResult,
    TestStatus,
)


@dataclass
class Grading:
    """Everything one grading needs."""

    tests: Sequence[Test]
    learner: Solution
    reference: Solution
    learner_source: str
    tolerances: dict[str, dict[str, Tolerance]]
    forbid: Sequence[str]
    seed: int
    mode: Mode = Mode.SUBMIT
    forbid_reason: str = ""  # exercise.yml's: why, quoted in every refusal
    side_effects: dict[str, str] = field(default_factory=dict)  # exercise.yml's exemptions
    may_alias: dict[str, str] = field(default_factory=dict)
    inputs_without_grad: str = ""  # exercise.yml's reason to skip that default check
    performance: dict[str, Any] | None = None  # exercise.yml's: graded, max_ratio
    measured: dict[str, Any] | None = None  # the performance test's figures, once run


def selected(tests: Sequence[Test], mode: Mode) -> list[Test]:
    """Run mode grades the visible tests only; performance is measured on submit."""
    if mode is Mode.RUN:
        return [t for t in tests if t.visible and t.kind != "performance"]
    return list(tests)


def grade(
    g: Grading,
    on_result: Callable[[TestResult], None] = lambda r: None,
    load_problem: str | None = None,
) -> GradingReport:
    """Every selected test in order; `on_result` hears each as it ends. `load_problem`: why
    the learner's code could not be loaded (then nothing is graded)."""
    compare.start_recording()
    results: list[TestResult] = []
    lost: str | None = load_problem
    for test in selected(g.tests, g.mode):
        if lost is not None:
            result = _result(test, TestStatus.ERROR, lost, 0)
        else:
            result = run_test(g, test)
            if result.status is TestStatus.ERROR and result.message.startswith(LOST_PREFIX):
                lost = "Not run: " + result.message
        results.append(result)
        on_result(result)
    final = report(results, g.seed, g.mode, load_problem)
    return replace(final, performance=g.measured, tolerances=compare.recorded())


LOST_PREFIX = "Your code's process ended"


def report(
    results: list[TestResult], seed: int, mode: Mode, load_problem: str | None = None
) -> GradingReport:
    weights = [CATEGORY_WEIGHTS.get(r.category, 1.0) for r in results]
    passed = sum(w for w, r in zip(weights, results, strict=True) if r.status is TestStatus.PASS)
    score = round(100.0 * passed / sum(weights), 1) if results else 0.0
    if load_problem is not None:
        verdict, detail = GradingVerdict.ERROR, load_problem
    elif all(r.status is TestStatus.PASS for r in results):
        verdict, detail = GradingVerdict.PASSED, ""
    else:
        failing = [r for r in results if r.status is not TestStatus.PASS]
        verdict = GradingVerdict.FAILED
        detail = f"{len(failing)} of {len(results)} tests did not pass; first: {failing[0].name}"
    return GradingReport(verdict, score, results, detail, seed, mode)


def _result(
    test: Test, status: TestStatus, message: str, ms: int, case: dict[str, Any] | None = None
) -> TestResult:
    return TestResult(test.name, test.category, not test.visible, status, message, ms, case)


def run_test(g: Grading, test: Test) -> TestResult:
    started = time.perf_counter()
    failing: dict[str, Any] | None = None  # a visible test's failing case, once known

    def done(status: TestStatus, message: str = "") -> TestResult:
        ms = int((time.perf_counter() - started) * 1000)
        return _result(
            test, status, message, ms, failing if status is not TestStatus.PASS else None
        )

    if test.kind == "api_rule":
        problems = api_rules.violations(g.learner_source, g.forbid, g.forbid_reason)
        return done(TestStatus.FAIL, "; ".join(problems[:5])) if problems else done(TestStatus.PASS)
    # A visible test's requests are noted, so that a failing case can be rebuilt as code; a
    # hidden test's never are (nothing of its inputs is shown).
    recording = cases.Recording(g.learner) if test.visible and test.kind != "performance" else None
    if recording is not None:
        g = replace(g, learner=recording)
    try:
        if test.kind == "performance":
            comparison = Comparison(g.tolerances, g.learner.device, test.visible)
            text, g.measured = perf.measure(
                test, g.learner, g.reference, g.seed, g.performance or {}, comparison
            )
            return done(TestStatus.PASS, text)
        g.learner.begin(test.name)
        for index in range(test.cases):
            for k, dtype in enumerate(test.dtypes):
                draw = Draw(case_seed(g.seed, test.name, index * 8 + k), index, dtype)
                assert test.inputs is not None
                c = test.inputs(draw)
                if recording is not None:
                    recording.steps = []
                    compare.forget_compared()
                try:
                    _run_case(g, test, c, draw)
                    side_effects.check(g.learner, g.side_effects, g.may_alias)
                except GraderFault:
                    raise
                except LearnerError:
                    if recording is not None:  # the snippet makes the call that raised
                        failing = _case(g, test, c, draw, recording, compared=False)
                    raise
                except Exception as exc:  # a check broken by the answer fails this test only
                    if recording is not None:
                        failing = _case(g, test, c, draw, recording, compared=True)
                    where = f"case {index + 1} of {test.cases} ({dtype}{_shapes(c)})"
                    return done(TestStatus.FAIL, f"{where}: {_failure(exc, test.visible)}")
    except perf.SlowerThanAllowed as exc:
        g.measured = exc.figures
        return done(TestStatus.FAIL, str(exc))
    except LearnerError as exc:
        status = TestStatus.TIMEOUT if exc.status == "timeout" else TestStatus.ERROR
        message = str(exc)
        if exc.lost:
            message = f"{LOST_PREFIX} during this test: {message}"
        return done(status, message)
    except GraderFault:
        raise
    except Exception as exc:  # e.g. the performance test's count of calls was not a number
        return done(TestStatus.FAIL, _failure(exc, test.visible))
    return done(TestStatus.PASS)


def _case(
    g: Grading, test: Test, c: Case, draw: Draw, recording: cases.Recording, compared: bool
) -> dict[str, Any] | None:
    """The failing case of a visible test (cases.py): its inputs, the last pair the test
    compared (when a comparison failed), the requests of the learner's code. Never lets a
    failure of its own hide the test's result."""
    seen = compare.last_compared() if compared else None
    pair = (seen[0], seen[1], seen[2]) if seen else None
    tolerance = None
    if seen is not None:
        comparison = seen[3]
        floats = [t for t in case_values.tensor_leaves(seen[0]) if t.is_floating_point()]
        tol = comparison.tolerance(floats[0].dtype if floats else torch.float64)
        tolerance = (tol.atol, tol.rtol)
    try:
        witness = cases.Witness(c, draw, list(recording.steps))
        return cases.build(test.name, witness, pair, tolerance, _parameter_names(g, test))
    except Exception:  # a summary we could not make: the message still says what failed
        return None


def _parameter_names(g: Grading, test: Test) -> list[str]:
    """The target's positional parameter names, read from the reference's signature."""
    if not isinstance(test.target, str) or not isinstance(g.reference, LocalSolution):
        return []
    try:
        signature = inspect.signature(g.reference.executor.resolve(test.target))
    except (NameError, AttributeError, TypeError, ValueError):
        return []
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in signature.parameters.values() if p.kind in kinds]


def _failure(exc: Exception, visible: bool) -> str:
    """What a failed check says. Any exception fails the test, not only a Mismatch: a
    property check that computes with the learner's answer (`p < 0`) raises TypeError on a
    string. Its text is shown for a visible test only, where it may quote expected values."""
    if isinstance(exc, Mismatch):
        return str(exc)
    shown = f": {exc}"[:500] if visible else ""
    return f"the check could not use your answer ({type(exc).__name__}{shown})"


def _incoming_layouts(draw: Draw, c: Case) -> tuple[str, ...]:
    """The layouts a gradient test's case checks its backward with again (gradcheck.INCOMING):
    both on the second case; the non-contiguous one (the same grad_output, no new reference
    call) on every other case whose first tensor spans two dims of size > 1, the shapes on
    which a .view() of a non-contiguous gradient can fail."""
    if draw.case == 1:
        return ("strided", "expanded")
    first = next((a for a in c.args if isinstance(a, torch.Tensor)), None)
    spread = first is not None and sum(n > 1 for n in first.shape) >= 2
    return ("strided",) if spread else ()


def _shapes(c: Case) -> str:
    shapes = [tuple(a.shape) for a in c.args if isinstance(a, torch.Tensor)]
    return (", inputs " + ", ".join(str(s) for s in shapes)) if shapes else ""


def _run_case(g: Grading, test: Test, c: Case, draw: Draw) -> None:
    """One case; an object's test (a target that drives calls) gets on its second case the
    default check of inputs that require grad, as a model's activations do."""
    if isinstance(test.target, str) or draw.case != 1 or g.inputs_without_grad:
        _check_case(g, test, c, draw)
        return
    g.learner.grad_inputs = True
    try:
        _check_case(g, test, c, draw)
    except LearnerError as exc:
        if exc.lost or exc.status != "error":
            raise
        raise LearnerError(
            f"with inputs that require grad (as a model's activations do), your code raised:\n{exc}"
        ) from None
    finally:
        g.learner.grad_inputs = False


def _check_case(g: Grading, test: Test, c: Case, draw: Draw) -> None:
    comparison = Comparison(
        g.tolerances, g.learner.device, test.visible, test.options.get("tol", 1.0)
    )
    if test.kind == "prop":
        token = checks.current.set(comparison)
        try:
            assert callable(test.target)
            test.target(g.learner, c.copied())
        finally:
            checks.current.reset(token)
        return
    if test.kind == "gradients":
        assert isinstance(test.target, str)
        check_gradients(
            g.learner,
            g.reference,
            test.target,
            c,
            test.options,
            draw.generator,
            test.visible,
            incoming=_incoming_layouts(draw, c),
        )
        return
    expected = _expected(g, test, c)
    actual = _drive(g.learner, test.target, c.copied())
    if test.kind == "values" and test.options.get("steps"):
        _check_steps(comparison, expected, actual)
    elif test.kind == "values":
        comparison.check(expected, actual)
        if isinstance(test.target, str) and draw.case == 0 and test.options.get("expect") is None:
            defaults.check_left_out(g.learner, g.reference, test.target, c, comparison)
        if isinstance(test.target, str) and draw.case == 1:
            defaults.check_layout(g.learner, test.target, c, expected, comparison)
            if test.options.get("expect") is None and test.target not in g.side_effects:
                defaults.check_aliased(g.learner, g.reference, test.target, c, comparison)
    elif test.kind == "shapes":
        _check_structure(expected, actual, g.learner)
    elif test.kind == "nontrivial":
        ratio = norm_ratio(expected, actual)
        if ratio < test.options["min_ratio"]:
            raise Mismatch(
                f"the output's norm is {ratio:.1%} of the expected output's: a near-constant or "
                "all-zero answer does not pass"
            )


def _check_steps(comparison: Comparison, expected: Any, actual: Any) -> None:
    """A trajectory: one output per step, compared in order, named by step."""
    if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
        raise Mismatch(f"expected {len(expected)} steps of output")
    for step, (e, a) in enumerate(zip(expected, actual, strict=True), start=1):
        comparison.check(e, a, f"after step {step}")


def _expected(g: Grading, test: Test, c: Case) -> Any:
    expect = test.options.get("expect")
    try:

        def compute(case: Case) -> Any:
            if expect is not None:
                return expect(case)
            return _drive(g.reference, test.target, case)

        answer = compute(c.copied())
        if test.options.get("exact"):
            return exactness.cast_like(compute(exactness.upcast_case(c)), answer)
        return answer
    except LearnerError as exc:
        raise GraderFault(f"the reference failed in {test.name!r}: {exc}") from None


def _drive(sol: Solution, target: Any, c: Case) -> Any:
    if isinstance(target, str):
        return sol.call(target, *c.args, **c.kwargs)
    return target(sol, c)


def _check_structure(expected: Any, actual: Any, learner: Solution, where: str = "output") -> None:
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor):
            raise Mismatch(f"{where}: expected a tensor, got {type(actual).__name__}")
        if tuple(actual.shape) != tuple(expected.shape):
            raise Mismatch(
                f"{where}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"
            )
        if actual.dtype != expected.dtype:
            raise Mismatch(f"{where}: expected dtype {expected.dtype}, got {actual.dtype}")
    elif isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(actual) != len(expected):
            raise Mismatch(f"{where}: expected {len(expected)} outputs")
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            _check_structure(e, a, learner, f"{where}[{i}]")
    wrong = [d for d in getattr(learner, "last_devices", []) if d != learner.device]
    if wrong:
        raise Mismatch(f"{where}: a tensor came back on {wrong[0]}, not {learner.device}")
