"""Do the compiled outputs match the eager ones? Walks nested outputs (tensors, tuples, lists,
dicts, numbers, None) in step and compares each pair of tensors.

A tensor pair matches when shapes and dtypes agree and every element satisfies
|compiled - eager| <= tol + tol * |eager| (torch.isclose with atol = rtol = tol, NaN equal to
NaN), tol taken from TOLERANCES by dtype unless the caller gives one.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

import torch

# Per dtype: used as both the absolute and the relative tolerance.
TOLERANCES: Final[dict[torch.dtype, float]] = {
    torch.float64: 1e-7,
    torch.complex128: 1e-7,
    torch.float32: 1e-4,
    torch.complex64: 1e-4,
    torch.float16: 1e-2,
    torch.bfloat16: 1e-2,
}
LOW_PRECISION_TOLERANCE: Final = 1e-1  # float8 and any other floating dtype not listed
EXACT: Final = 0.0  # integers and bool must be equal
PYTHON_FLOAT_TOLERANCE: Final = TOLERANCES[torch.float32]  # plain Python numbers returned


def format_tolerance(tolerance: float) -> str:
    """1e-4 rather than 0.0001; 0 is "0 (exact)"."""
    if tolerance == 0.0:
        return "0 (exact)"
    if not math.isfinite(tolerance):
        return str(tolerance)
    mantissa, _, exponent = f"{tolerance:.0e}".partition("e")
    return f"{mantissa}e{int(exponent)}"


def tolerance_for(dtype: torch.dtype) -> float:
    """The tolerance used for outputs of this dtype."""
    if dtype in TOLERANCES:
        return TOLERANCES[dtype]
    if dtype.is_floating_point or dtype.is_complex:
        return LOW_PRECISION_TOLERANCE
    return EXACT


@dataclass(frozen=True)
class Leaf:
    """One compared pair: where it is, its largest difference, and whether it is within tol."""

    path: str
    max_abs_diff: float
    tolerance: float
    ok: bool
    note: str = ""


@dataclass(frozen=True)
class OutputCheck:
    correct: bool
    max_abs_diff: float
    tolerance: float  # the largest tolerance applied (the loosest dtype among the outputs)
    mismatch: str | None  # where and how the first mismatch is, None when correct
    compared: int  # number of tensors and numbers compared


def _is_sequence(value: object) -> bool:
    return isinstance(value, list | tuple)


def _tensor_leaf(path: str, eager: torch.Tensor, compiled: torch.Tensor, tol: float | None) -> Leaf:
    dtype = eager.dtype
    used = tolerance_for(dtype) if tol is None else tol
    if tuple(eager.shape) != tuple(compiled.shape):
        note = f"shape {tuple(compiled.shape)} instead of {tuple(eager.shape)}"
        return Leaf(path, math.inf, used, False, note)
    if compiled.dtype != dtype:
        note = f"dtype {compiled.dtype} instead of {dtype}"
        return Leaf(path, math.inf, used, False, note)
    if eager.numel() == 0:
        return Leaf(path, 0.0, used, True)
    wide = torch.complex128 if dtype.is_complex else torch.float64
    e = eager.detach().to(device="cpu", dtype=wide)
    c = compiled.detach().to(device="cpu", dtype=wide)
    both_nan = torch.isnan(e) & torch.isnan(c)
    same_inf = torch.isinf(e) & (e == c)
    diff = torch.where(both_nan | same_inf, torch.zeros_like(e.real), (c - e).abs())
    biggest = float(torch.nan_to_num(diff, nan=math.inf).max().item())
    close = torch.isclose(c, e, rtol=used, atol=used, equal_nan=True)
    ok = bool(close.all().item())
    note = "" if ok else f"max abs diff {biggest:.3g} over tolerance {format_tolerance(used)}"
    return Leaf(path, biggest, used, ok, note)


def _number_leaf(path: str, eager: complex, compiled: complex, tol: float | None) -> Leaf:
    used = PYTHON_FLOAT_TOLERANCE if tol is None else tol
    if isinstance(eager, bool | int) and isinstance(compiled, bool | int) and tol is None:
        used = EXACT
    if eager == compiled or (eager != eager and compiled != compiled):  # equal, or both NaN
        return Leaf(path, 0.0, used, True)
    gap = abs(compiled - eager)
    diff = gap if not math.isnan(gap) else math.inf
    ok = diff <= used + used * abs(eager)
    return Leaf(path, diff, used, ok, "" if ok else f"{compiled!r} instead of {eager!r}")


def _same(eager: Any, compiled: Any) -> bool:
    try:
        return bool(eager == compiled)
    except Exception:  # an == that returns no single truth value (an array, say)
        return eager is compiled


def _walk(path: str, eager: Any, compiled: Any, tol: float | None) -> Iterator[Leaf]:
    if isinstance(eager, torch.Tensor) or isinstance(compiled, torch.Tensor):
        if isinstance(eager, torch.Tensor) and isinstance(compiled, torch.Tensor):
            yield _tensor_leaf(path, eager, compiled, tol)
        else:
            note = f"{type(compiled).__name__} instead of {type(eager).__name__}"
            yield Leaf(path, math.inf, tol or 0.0, False, note)
    elif _is_sequence(eager) and _is_sequence(compiled):
        if len(eager) != len(compiled):
            note = f"{len(compiled)} items instead of {len(eager)}"
            yield Leaf(path, math.inf, tol or 0.0, False, note)
            return
        for index, (e, c) in enumerate(zip(eager, compiled, strict=True)):
            yield from _walk(f"{path}[{index}]", e, c, tol)
    elif isinstance(eager, Mapping) and isinstance(compiled, Mapping):
        if set(eager) != set(compiled):
            note = f"keys {sorted(map(str, compiled))} instead of {sorted(map(str, eager))}"
            yield Leaf(path, math.inf, tol or 0.0, False, note)
            return
        for key in eager:
            yield from _walk(f"{path}[{key!r}]", eager[key], compiled[key], tol)
    elif isinstance(eager, int | float | complex) and isinstance(compiled, int | float | complex):
        yield _number_leaf(path, eager, compiled, tol)
    elif _same(eager, compiled):
        yield Leaf(path, 0.0, tol or 0.0, True)
    else:
        yield Leaf(path, math.inf, tol or 0.0, False, f"{compiled!r} instead of {eager!r}")


def check_outputs(
    eager: Any, compiled: Any, tolerance: float | None = None, root: str = "output"
) -> OutputCheck:
    """Compare nested outputs; `tolerance` overrides the per-dtype table for every tensor
    (float("inf"): compare nothing, always correct; the difference is still measured).
    `root` names the top level in the mismatch text, e.g. "output[1]['h']: shape ..."."""
    leaves = list(_walk(root, eager, compiled, tolerance))
    if tolerance is not None and math.isinf(tolerance):
        biggest = max((leaf.max_abs_diff for leaf in leaves), default=0.0)
        return OutputCheck(True, biggest, tolerance, None, len(leaves))
    bad = next((leaf for leaf in leaves if not leaf.ok), None)
    return OutputCheck(
        correct=bad is None,
        max_abs_diff=max((leaf.max_abs_diff for leaf in leaves), default=0.0),
        tolerance=max((leaf.tolerance for leaf in leaves), default=tolerance or 0.0),
        mismatch=None if bad is None else f"{bad.path}: {bad.note}",
        compared=len(leaves),
    )


def combine(first: OutputCheck, second: OutputCheck) -> OutputCheck:
    """Two checks as one (outputs and gradients): correct when both are."""
    return OutputCheck(
        correct=first.correct and second.correct,
        max_abs_diff=max(first.max_abs_diff, second.max_abs_diff),
        tolerance=max(first.tolerance, second.tolerance),
        mismatch=first.mismatch or second.mismatch,
        compared=first.compared + second.compared,
    )


def max_abs_diff(eager: Any, compiled: Any) -> float:
    """The largest absolute difference over all tensors and numbers in nested outputs
    (infinity when the structure, a shape or a dtype differs)."""
    return check_outputs(eager, compiled).max_abs_diff


def detached_copy(value: Any) -> Any:
    """A copy of nested outputs that later calls cannot overwrite (CUDA graphs reuse buffers)."""
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, list):
        return [detached_copy(v) for v in value]
    if isinstance(value, tuple):
        items = [detached_copy(v) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Mapping):
        return {k: detached_copy(v) for k, v in value.items()}
    return value


def tensors_in(value: Any) -> Iterator[torch.Tensor]:
    """Every tensor in nested values, depth first."""
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from tensors_in(item)
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from tensors_in(item)
