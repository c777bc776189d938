"""Comparing a learner's output with the expected one, in the grader's process.

A tensor matches when its shape and dtype are the expected ones and every element satisfies
|actual - expected| <= atol + rtol * |expected|, NaN only where NaN is expected and infinities
of the same sign where they are expected. The message says what differs and by how much
(max absolute and relative error, where the first mismatch is, the tolerance used); for a
hidden test it never shows an expected value."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch


class Mismatch(Exception):
    """A test's check failed; the message is what the learner reads."""


@dataclass(frozen=True)
class Tolerance:
    atol: float
    rtol: float

    def short(self) -> str:
        return f"atol {self.atol:g} + rtol {self.rtol:g}"

    def describe(self, dtype: str, device: str) -> str:
        return f"{self.short()} x |expected| ({dtype} on {device})"


# Used where an exercise states none for a dtype or a device.
DEFAULT_TOLERANCES: dict[str, dict[str, Tolerance]] = {
    "float64": {"cpu": Tolerance(1e-8, 1e-6), "cuda": Tolerance(1e-7, 1e-5)},
    "float32": {"cpu": Tolerance(1e-5, 1e-4), "cuda": Tolerance(1e-4, 1e-3)},
    "float16": {"cpu": Tolerance(1e-2, 1e-2), "cuda": Tolerance(1e-2, 1e-2)},
    "bfloat16": {"cpu": Tolerance(2e-2, 2e-2), "cuda": Tolerance(2e-2, 2e-2)},
}


# The tolerances one grading's comparisons used, per dtype, before any test's own scale: the
# report names them, so that a learner sees what "close" meant on the device it ran on (a GPU
# is allowed more than a CPU). One grading runs at a time in a grader's process.
_used: dict[str, str] = {}


def start_recording() -> None:
    _used.clear()


def recorded() -> dict[str, str]:
    return dict(_used)


# The last pair a comparison was asked about, in the grader's process: a failing visible
# test's case shows it (cases.py). Only references are held, until the next comparison.
_compared: list[tuple[Any, Any, str, Comparison]] = []


def last_compared() -> tuple[Any, Any, str, Comparison] | None:
    return _compared[0] if _compared else None


def forget_compared() -> None:
    _compared.clear()


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass(frozen=True)
class Comparison:
    """How one test compares: tolerances per dtype on the learner's device, and whether it
    may show expected values (visible tests only)."""

    tolerances: dict[str, dict[str, Tolerance]]
    device: str
    visible: bool
    scale: float = 1.0  # a test may loosen (or tighten) the exercise's tolerances

    def tolerance(self, dtype: torch.dtype) -> Tolerance:
        name = dtype_name(dtype)
        per_device = self.tolerances.get(name) or DEFAULT_TOLERANCES.get(name) or {}
        tol = per_device.get(self.device) or per_device.get("cpu") or Tolerance(0.0, 0.0)
        _used.setdefault(name, tol.short())
        return Tolerance(tol.atol * self.scale, tol.rtol * self.scale)

    def check(self, expected: Any, actual: Any, where: str = "output") -> None:
        """Raise Mismatch when `actual` does not match `expected`."""
        _compared[:] = [(expected, actual, where, self)]
        self._check(expected, actual, where)

    def _check(self, expected: Any, actual: Any, where: str) -> None:
        if isinstance(expected, torch.Tensor):
            self._tensor(expected, actual, where)
        elif isinstance(expected, (list, tuple)):
            if not isinstance(actual, (list, tuple)):
                raise Mismatch(f"{where}: expected a {_kind(expected)}, got {_kind(actual)}")
            if len(actual) != len(expected):
                raise Mismatch(f"{where}: expected {len(expected)} items, got {len(actual)}")
            for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
                self._check(e, a, f"{where}[{i}]")
        elif isinstance(expected, dict):
            if not isinstance(actual, dict):
                raise Mismatch(f"{where}: expected a dict, got {_kind(actual)}")
            if set(actual) != set(expected):
                raise Mismatch(
                    f"{where}: expected keys {sorted(map(str, expected))}, "
                    f"got {sorted(map(str, actual))}"
                )
            for key in expected:
                self._check(expected[key], actual[key], f"{where}[{key!r}]")
        elif isinstance(expected, bool) or expected is None or isinstance(expected, str):
            if actual != expected or type(actual) is not type(expected):
                shown = f" (expected {expected!r})" if self.visible else ""
                raise Mismatch(f"{where}: got {actual!r}{shown}")
        elif isinstance(expected, (int, float)):
            self._number(float(expected), actual, where)
        else:
            raise TypeError(f"cannot compare a {type(expected).__name__}")

    def _number(self, expected: float, actual: Any, where: str) -> None:
        if isinstance(actual, torch.Tensor) and actual.numel() == 1:
            actual = actual.item()
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            raise Mismatch(f"{where}: expected a number, got {_kind(actual)}")
        tol = self.tolerance(torch.float64)
        if math.isnan(expected) and math.isnan(actual):
            return
        if math.isclose(actual, expected, rel_tol=tol.rtol, abs_tol=tol.atol) or (
            abs(actual - expected) <= tol.atol + tol.rtol * abs(expected)
        ):
            return
        shown = f", expected {expected:.6g}" if self.visible else ""
        raise Mismatch(f"{where}: got {actual:.6g}{shown} (abs error {abs(actual - expected):.3g})")

    def _tensor(self, expected: torch.Tensor, actual: Any, where: str) -> None:
        if not isinstance(actual, torch.Tensor):
            raise Mismatch(f"{where}: expected a tensor, got {_kind(actual)}")
        if tuple(actual.shape) != tuple(expected.shape):
            raise Mismatch(
                f"{where}: expected shape {tuple(expected.shape)}, got {tuple(actual.shape)}"
            )
        if actual.dtype != expected.dtype:
            raise Mismatch(
                f"{where}: expected dtype {dtype_name(expected.dtype)}, "
                f"got {dtype_name(actual.dtype)}"
            )
        if expected.numel() == 0:
            return
        if not expected.is_floating_point() and not expected.is_complex():
            bad = actual != expected
            if bool(bad.any()):
                raise Mismatch(
                    f"{where}: {_count(bad)} wrong at {_index(bad)}"
                    + self._show(expected, actual, bad)
                )
            return
        tol = self.tolerance(expected.dtype)
        e, a = expected.double(), actual.double()
        diff = (a - e).abs()
        both_nan = e.isnan() & a.isnan()
        same_inf = e.isinf() & (a == e)
        ok = (diff <= tol.atol + tol.rtol * e.abs()) | both_nan | same_inf
        bad = ~ok
        if not bool(bad.any()):
            return
        finite = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
        finite = torch.nan_to_num(finite, nan=math.inf, posinf=math.inf)
        worst = int(finite.flatten().argmax())
        rel = finite / e.abs().clamp_min(1e-30)
        parts = [f"{where}: {_count(bad)} of {expected.numel()} elements differ"]
        unexpected_nan = a.isnan() & ~e.isnan()
        if bool(unexpected_nan.any()):
            parts.append(f"NaN where none was expected, first at {_index(unexpected_nan)}")
        parts.append(
            f"max abs error {float(finite.flatten()[worst]):.3g} at "
            f"{_unravel(worst, expected.shape)}, max rel error {float(rel.max()):.3g}"
        )
        parts.append(f"first mismatch at {_index(bad)}")
        parts.append("tolerance " + tol.describe(dtype_name(expected.dtype), self.device))
        raise Mismatch("; ".join(parts) + self._show(e, a, bad))

    def _show(self, expected: torch.Tensor, actual: torch.Tensor, bad: torch.Tensor) -> str:
        """Expected against actual at the first mismatch: visible tests only."""
        if not self.visible:
            return ""
        first = int(bad.flatten().nonzero()[0])
        e, a = expected.flatten()[first].item(), actual.flatten()[first].item()
        return f" (there: expected {e:.6g}, got {a:.6g})"


def norm_ratio(expected: Any, actual: Any) -> float:
    """||actual|| / ||expected|| over every floating tensor of the two outputs."""
    e, a = _floats(expected), _floats(actual)
    e_norm = math.sqrt(sum(float(t.double().pow(2).sum()) for t in e))
    a_norm = math.sqrt(sum(float(t.double().pow(2).sum()) for t in a))
    return math.inf if e_norm == 0 else a_norm / e_norm


def _floats(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value.detach().nan_to_num()] if value.is_floating_point() else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _floats(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _floats(v)]
    return []


def _kind(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return type(value).__name__


def _count(bad: torch.Tensor) -> int:
    return int(bad.sum())


def _index(mask: torch.Tensor) -> tuple[int, ...]:
    return _unravel(int(mask.flatten().nonzero()[0]), mask.shape)


def _unravel(flat: int, shape: torch.Size) -> tuple[int, ...]:
    index = []
    for size in reversed(tuple(shape)):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))
