"""The declarations an exercise's tests.py is written in (content/README.md, "Exercises").

    from sandbox.grading import case, values, gradients, prop, trajectory, shapes, edge, ...

    def rows(d):                       # d: a Draw, seeded per case (draws.py)
        return case(d.tensor(d.shape(2, high=40)), dim=-1)

    DECLARATIONS = [
        values("matches on random rows", "softmax", rows, visible=True),
        gradients("backward agrees with finite differences", "GELUFunction.apply", small),
        prop("rows sum to one", rows_sum_to_one, rows),
        api_rule("does not call the built-in softmax"),
    ]

A target is the name the learner's code defines (a dotted path reaches inside it, e.g.
`GELUFunction.apply`), or a script `fn(sol, case) -> output` that drives the solution through
its handle (solution.py: call, new, method, get, set, keep, index, vjp). The same target runs
against the reference and against the learner; the grader compares the two."""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandbox.grading.compare import Mismatch
from sandbox.grading.draws import Draw

if TYPE_CHECKING:
    from sandbox.grading.solution import Solution
    from sandbox.grading.wire import Ref

CATEGORIES = (
    "shape",
    "values",
    "gradients",
    "properties",
    "edge cases",
    "API rules",
    "performance",
)
# A test's weight in the score is its category's.
CATEGORY_WEIGHTS = {
    "shape": 1.0,
    "values": 3.0,
    "gradients": 3.0,
    "properties": 2.0,
    "edge cases": 2.0,
    "API rules": 1.0,
    "performance": 1.0,
}
KINDS = ("values", "shapes", "gradients", "prop", "nontrivial", "api_rule", "performance")


@dataclass(frozen=True)
class Case:
    """One set of inputs: the target's positional and keyword arguments, and `data` for what
    a script needs beside them (weights to inject, gradients to feed an optimiser...)."""

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)

    def copied(self) -> Case:
        """A deep copy: each side of a comparison gets its own inputs, so what one does to
        them the other never sees."""
        return Case(
            copy.deepcopy(self.args, {}),
            copy.deepcopy(self.kwargs, {}),
            copy.deepcopy(self.data, {}),
        )


def case(*args: Any, data: dict[str, Any] | None = None, **kwargs: Any) -> Case:
    """`case(x, dim=-1)`: the target is called as target(x, dim=-1)."""
    return Case(tuple(args), dict(kwargs), dict(data or {}))


Target = str | Callable[..., Any]
Inputs = Callable[[Draw], Case]


@dataclass(frozen=True)
class Test:
    """One declared test. Build it with the functions below, not directly."""

    __test__ = False  # not a pytest test class

    name: str
    category: str
    kind: str
    target: Target | None = None
    inputs: Inputs | None = None
    cases: int = 3
    visible: bool = False
    description: str = ""
    dtypes: tuple[str, ...] = ("float32",)
    # What a kind needs beyond the above: `expect` (a trusted function computing the expected
    # output instead of the reference), `check` (a property), `tol` (scales the tolerances),
    # `min_ratio`, `max_ratio`, `eps`...
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name or len(self.name) > 120:
            raise ValueError("a test's name is 1 to 120 characters")
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.name}: unknown category {self.category!r}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: unknown kind {self.kind!r}")
        if self.cases < 1:
            raise ValueError(f"{self.name}: cases must be at least 1")
        if self.kind not in ("api_rule",) and (self.target is None or self.inputs is None):
            raise ValueError(f"{self.name}: needs a target and inputs")


def _test(kind: str, category: str, name: str, target: Target | None, inputs: Inputs | None,
          cases: int, visible: bool, description: str, dtypes: Sequence[str],
          **options: Any) -> Test:  # fmt: skip
    return Test(
        name, category, kind, target, inputs, cases, visible, description, tuple(dtypes), options
    )


def values(
    name: str,
    target: Target,
    inputs: Inputs,
    *,
    cases: int = 3,
    dtypes: Sequence[str] = ("float32",),
    visible: bool = False,
    description: str = "",
    tol: float = 1.0,
    expect: Callable[[Case], Any] | None = None,
    category: str = "values",
    exact: bool = False,
    guarantee: Callable[[Case], bool] | None = None,
) -> Test:
    """The learner's output equals the reference's (or `expect(case)`'s) within the
    exercise's tolerance for the output's dtype on the learner's device, times `tol`. With
    `exact`, the reference runs on the case upcast to float64 and its answer is cast back
    (exactness.py): for inputs where the reference's own rounding in the dtype under test
    would use up the tolerance. `guarantee(case)` states what every drawn case must have for
    the test to mean what its name says (the base matters, a tie occurs...):
    tests/grading/test_generators.py holds it on seeds 0-4."""
    return _test("values", category, name, target, inputs, cases, visible, description, dtypes,
                 tol=tol, expect=expect, exact=exact, guarantee=guarantee)  # fmt: skip


def edge(name: str, target: Target, inputs: Inputs, **kw: Any) -> Test:
    """A values test on edge inputs (empty, size 1, huge logits...): category `edge cases`."""
    return values(name, target, inputs, category="edge cases", **kw)


def trajectory(
    name: str,
    run: Callable[..., Any],
    inputs: Inputs,
    *,
    expect: Callable[[Case], Any] | None = None,
    cases: int = 2,
    **kw: Any,
) -> Test:
    """k steps of an optimiser or a module, driven by the script `run(sol, case)` that
    returns one output per step (a list); compared step by step with the reference's, or
    with `expect(case)` (e.g. torch.optim with the same injected weights)."""
    test = values(name, run, inputs, expect=expect, cases=cases, **kw)
    return Test(**{**test.__dict__, "options": {**test.options, "steps": True}})


def shapes(
    name: str,
    target: Target,
    inputs: Inputs,
    *,
    cases: int = 3,
    dtypes: Sequence[str] = ("float32",),
    visible: bool = True,
    description: str = "",
) -> Test:
    """Shape, dtype and device of the output equal the reference's; values not compared."""
    return _test("shapes", "shape", name, target, inputs, cases, visible, description, dtypes)


def gradients(
    name: str,
    target: Target,
    inputs: Inputs,
    *,
    cases: int = 2,
    visible: bool = False,
    description: str = "",
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    directions: int = 4,
) -> Test:
    """Gradcheck semantics, run by the grader in float64: the learner's backward (its
    vector-Jacobian products) against central finite differences of its own forward along
    random directions, and against the reference's backward. `inputs` should draw small
    float64 tensors (d.dtype is float64 here)."""
    return _test("gradients", "gradients", name, target, inputs, cases, visible, description,
                 ("float64",), eps=eps, atol=atol, rtol=rtol, directions=directions)  # fmt: skip


def prop(
    name: str,
    check: Callable[..., Any],
    inputs: Inputs,
    *,
    cases: int = 3,
    dtypes: Sequence[str] = ("float32",),
    visible: bool = False,
    description: str = "",
    tol: float = 1.0,
) -> Test:
    """A property of the learner's solution alone: `check(sol, case)` calls it and raises
    (through `expect_close` or `fail`) when the property does not hold."""
    return _test("prop", "properties", name, check, inputs, cases, visible, description,
                 dtypes, tol=tol)  # fmt: skip


def nontrivial(
    name: str,
    target: Target,
    inputs: Inputs,
    *,
    min_ratio: float = 0.1,
    cases: int = 2,
    visible: bool = False,
    description: str = "",
) -> Test:
    """A guard against trivial outputs: the norm of the learner's output is at least
    `min_ratio` of the reference's (zeros never pass, whatever the tolerance)."""
    return _test("nontrivial", "values", name, target, inputs, cases, visible, description,
                 ("float32",), min_ratio=min_ratio)  # fmt: skip


def api_rule(
    name: str = "uses none of the forbidden functions",
    *,
    visible: bool = True,
    description: str = "",
) -> Test:
    """The learner's code, read (never run) by the grader, calls nothing in exercise.yml's
    `forbid` list: see api_rules.py for what counts. The list lives there alone, because the
    statement's "Not allowed" section is generated from it."""
    return _test("api_rule", "API rules", name, None, None, 1, visible, description, ())


def performance(
    name: str,
    target: str,
    inputs: Inputs,
    *,
    rounds: int = 5,
    calls: int = 8,
    description: str = "",
    setup: Callable[[Solution, Case], Ref] | None = None,
) -> Test:
    """The learner's time against the reference's on the same inputs, interleaved rounds
    (perf.py). Graded against `performance.max_ratio` only where exercise.yml says
    `performance: {graded: true}`; otherwise reported and always passed.

    With `setup(sol, case)`, `target` is a method of the object it builds (a module's
    `forward`, an optimiser's `step`): built afresh for each round from the round's first
    case, outside the clock; each call then gets its own case's `args`."""
    return _test("performance", "performance", name, target, inputs, 1, False, description,
                 ("float32",), rounds=rounds, calls=calls, setup=setup)  # fmt: skip


def fail(message: str) -> None:
    """End a property check: it does not hold (the message is shown to the learner)."""
    raise Mismatch(message)
