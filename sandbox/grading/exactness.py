"""No tolerance tighter than the reference's own error.

A values test compares the learner's output with the reference's, run in the dtype under
test. Where that dtype is lower than float64, the reference itself is off from the exact
result by its rounding, and a learner who computes more exactly (in float64, or in another
order) is off from the reference by up to that much more. So either the expected values are
computed in float64 (`values(..., exact=True)`: the runner upcasts the case and casts the
answer of the reference, or of the test's `expect`, back), or the reference's error against
that float64 computation must stay within half the tolerance on every drawn case.
`reference_errors` measures it; a test holds it for every exercise
(tests/grading/test_exactness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from sandbox.grading.compare import DEFAULT_TOLERANCES, Tolerance, dtype_name
from sandbox.grading.draws import Draw, case_seed
from sandbox.grading.dsl import Case, Test
from sandbox.grading.solution import LearnerError, Solution
from sandbox.grading.wire import tensors_in

LOW_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def upcast(value: Any) -> Any:
    """Every low-precision floating tensor in `value` (nested lists, tuples, dicts) as
    float64; everything else as it is."""
    if isinstance(value, torch.Tensor):
        if value.dtype in LOW_DTYPES:
            return value.detach().to(torch.float64).requires_grad_(value.requires_grad)
        return value
    if isinstance(value, list):
        return [upcast(v) for v in value]
    if isinstance(value, tuple):
        return tuple(upcast(v) for v in value)
    if isinstance(value, dict):
        return {k: upcast(v) for k, v in value.items()}
    return value


def cast_like(exact: Any, shaped: Any) -> Any:
    """`exact` (the float64 answer) with each tensor cast to the dtype of its counterpart in
    `shaped` (the answer in the dtype under test): the values of the one, the types of the
    other. ValueError when the two answers do not have the same structure."""
    if isinstance(shaped, torch.Tensor):
        if not isinstance(exact, torch.Tensor) or exact.shape != shaped.shape:
            raise ValueError("the float64 answer has another structure")
        return exact.to(shaped.dtype) if shaped.is_floating_point() else shaped
    if isinstance(shaped, (list, tuple)):
        if not isinstance(exact, (list, tuple)) or len(exact) != len(shaped):
            raise ValueError("the float64 answer has another structure")
        items = [cast_like(e, s) for e, s in zip(exact, shaped, strict=True)]
        return type(shaped)(items) if isinstance(shaped, tuple) else items
    if isinstance(shaped, dict):
        if not isinstance(exact, dict) or set(exact) != set(shaped):
            raise ValueError("the float64 answer has another structure")
        return {k: cast_like(exact[k], v) for k, v in shaped.items()}
    return shaped


@contextmanager
def float64_default() -> Iterator[None]:
    """Tensors made without a dtype are float64 meanwhile: a module's parameters and buffers
    (nn.BatchNorm2d's, a model's) then compute in float64 beside the upcast inputs. Used only
    where the reference runs in this process (the measure below, not a learner's grading)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(before)


def upcast_case(c: Case) -> Case:
    return Case(upcast(c.args), upcast(c.kwargs), upcast(c.data))


@dataclass(frozen=True)
class CaseError:
    test: str
    case: int
    seed: int
    ratio: float  # the reference's largest error as a fraction of the tolerance
    skipped: str = ""  # why it could not be measured (the reference did not run in float64)


def reference_errors(
    tests: list[Test],
    reference: Solution,
    tolerances: dict[str, dict[str, Tolerance]],
    seeds: tuple[int, ...],
    drive: Any,
) -> Iterator[CaseError]:
    """For every low-precision values case that is not already computed exactly: how far the
    reference's answer is from its own float64 answer, as a fraction of the tolerance (1.0 =
    all of it). `drive(sol, target, case)` runs a target as the runner does."""
    for test in tests:
        if test.kind != "values" or test.options.get("exact"):
            continue
        expect = test.options.get("expect")
        for seed in seeds:
            for index in range(test.cases):
                for k, dtype in enumerate(test.dtypes):
                    if dtype == "float64":
                        continue
                    assert test.inputs is not None
                    draw = Draw(case_seed(seed, test.name, index * 8 + k), index, dtype)
                    c = test.inputs(draw)
                    try:
                        if expect is not None:
                            low = expect(c.copied())
                            with float64_default():
                                high = expect(upcast_case(c))
                        else:
                            low = drive(reference, test.target, c.copied())
                            with float64_default():
                                high = drive(reference, test.target, upcast_case(c))
                        high = cast_like(high, low)
                    except (LearnerError, ValueError, RuntimeError, TypeError) as exc:
                        # A reference that cannot run in float64 (a dtype it checks, a
                        # tensor it builds with a fixed dtype): reported, not measured.
                        yield CaseError(test.name, index, seed, 0.0, str(exc)[:200] or "error")
                        continue
                    ratio = _worst(low, high, tolerances, test.options.get("tol", 1.0))
                    yield CaseError(test.name, index, seed, ratio)


def _worst(low: Any, high: Any, tolerances: dict[str, dict[str, Tolerance]], scale: float) -> float:
    worst = 0.0
    for a, e in zip(tensors_in(low), tensors_in(high), strict=True):
        if not a.is_floating_point() or a.numel() == 0:
            continue
        name = dtype_name(a.dtype)
        per = tolerances.get(name) or DEFAULT_TOLERANCES.get(name) or {}
        tol = per.get("cpu") or Tolerance(0.0, 0.0)
        exact = e.detach().to(torch.float64)
        got = a.detach().to(torch.float64)
        finite = torch.isfinite(exact) & torch.isfinite(got)
        if not bool(finite.any()):
            continue
        allowed = scale * (tol.atol + tol.rtol * exact[finite].abs())
        error = (got[finite] - exact[finite]).abs()
        worst = max(worst, float((error / allowed.clamp_min(1e-300)).max()))
    return worst
