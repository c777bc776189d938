"""What a case's values are, as a learner reads them, bounded: a small tensor in full, a
large one by its shape, dtype, corner, range and count of NaN and infinities; and where two
outputs differ most. Used by cases.py for a failing visible test's case; everything is
JSON-safe (non-finite floats are written as text)."""

from __future__ import annotations

import math
from typing import Any

import torch

from sandbox.grading.compare import dtype_name
from sandbox.grading.wire import Ref

SMALL = 64  # a tensor of at most this many values is shown in full
CORNER = (4, 6)  # the rows and columns of a larger one's top-left corner
MAX_ITEMS = 8  # items of a list, tuple or dict summarised
MAX_TEXT = 400


def number(value: float) -> float | str:
    """A float JSON can hold: NaN and the infinities as text."""
    return value if math.isfinite(value) else repr(value)


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, complex):
        return f"{value:.4g}"
    return str(value)


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return _fmt(values)


def _corner(t: torch.Tensor) -> tuple[torch.Tensor, str]:
    """The top-left corner of a large tensor, and its place: for 3 dims and more, the last
    two dims at index 0 of the leading ones."""
    if t.dim() == 1:
        return t[: CORNER[0] * CORNER[1]], f"[:{CORNER[0] * CORNER[1]}]"
    lead = (0,) * (t.dim() - 2)
    rows, cols = CORNER
    corner = t[lead][:rows, :cols]
    place = "".join("0, " for _ in lead)
    return corner, f"[{place}:{rows}, :{cols}]"


def summary(value: Any, depth: int = 0) -> dict[str, Any]:
    """What a value is, bounded: a small tensor in full, a large one by its shape, dtype,
    top-left corner, range and count of NaN and infinities; numbers, strings and None as
    they are; lists, tuples and dicts item by item (the first MAX_ITEMS)."""
    if isinstance(value, torch.Tensor):
        return _tensor_summary(value.detach().cpu())
    if value is None or isinstance(value, bool):
        return {"kind": "value", "text": repr(value)}
    if isinstance(value, int):
        return {"kind": "number", "text": str(value)}
    if isinstance(value, float):
        return {"kind": "number", "text": _fmt(value)}
    if isinstance(value, str):
        return {"kind": "text", "text": repr(value[:MAX_TEXT])}
    if isinstance(value, Ref):
        return {"kind": "object", "text": "an object of your code"}
    if isinstance(value, (list, tuple, dict)) and depth < 3:
        pairs = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
        items = [
            {"key": repr(k) if isinstance(value, dict) else str(k), **summary(v, depth + 1)}
            for k, v in pairs[:MAX_ITEMS]
        ]
        return {
            "kind": type(value).__name__,
            "length": len(value),
            "items": items,
            "text": f"{type(value).__name__} of {len(value)}",
        }
    return {"kind": "other", "text": f"a {type(value).__name__}"}


def _tensor_summary(t: torch.Tensor) -> dict[str, Any]:
    out: dict[str, Any] = {
        "kind": "tensor",
        "shape": list(t.shape),
        "dtype": dtype_name(t.dtype),
        "full": t.numel() <= SMALL,
    }
    if t.numel() == 0:
        out["text"] = "(empty)"
        return out
    if t.numel() <= SMALL:
        out["text"] = _nested(t.tolist()) if t.dim() else _fmt(t.item())
    else:
        corner, place = _corner(t)
        out["corner"] = place
        out["text"] = _nested(corner.tolist())
    if t.dtype == torch.bool:
        out["true"] = int(t.sum())
        return out
    if t.is_complex():
        return out
    wide = t.double() if t.is_floating_point() else t.long()
    finite = wide[torch.isfinite(wide)] if t.is_floating_point() else wide.flatten()
    if finite.numel():
        out["min"] = number(float(finite.min()))
        out["max"] = number(float(finite.max()))
    if t.is_floating_point():
        out["nan"] = int(t.isnan().sum())
        out["inf"] = int(t.isinf().sum())
    return out


def tensor_leaves(value: Any) -> list[torch.Tensor]:
    return [v for _, v in _tensors(value, "") if isinstance(v, torch.Tensor)]


def _tensors(value: Any, where: str) -> list[tuple[str, Any]]:
    """(place, leaf) for each tensor or number of a nested output, depth first."""
    if isinstance(value, torch.Tensor) or (
        isinstance(value, (int, float)) and not isinstance(value, bool)
    ):
        return [(where, value)]
    if isinstance(value, (list, tuple)):
        return [x for i, v in enumerate(value) for x in _tensors(v, f"{where}[{i}]")]
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in _tensors(v, f"{where}[{k!r}]")]
    return []


def difference(expected: Any, actual: Any, where: str = "output") -> dict[str, Any] | None:
    """The largest absolute difference between the two outputs, where it is and both values
    there; None when they cannot be set side by side (other shapes, other structure). A NaN
    on one side only is an infinite difference."""
    pairs_e, pairs_a = _tensors(expected, where), _tensors(actual, where)
    if len(pairs_e) != len(pairs_a) or not pairs_e:
        return None
    best: dict[str, Any] | None = None
    best_size = -1.0
    for (place, e), (_, a) in zip(pairs_e, pairs_a, strict=True):
        et = torch.as_tensor(e).detach().cpu()
        at = torch.as_tensor(a).detach().cpu()
        if et.shape != at.shape or et.numel() == 0:
            if et.shape != at.shape:
                return None
            continue
        if et.is_complex() or at.is_complex():
            continue
        ed, ad = et.double(), at.double()
        gap = (ad - ed).abs()
        same = (ed == ad) | (ed.isnan() & ad.isnan())
        gap = torch.where(same, torch.zeros_like(gap), gap)
        gap = torch.nan_to_num(gap, nan=math.inf)
        flat = int(gap.flatten().argmax())
        size = float(gap.flatten()[flat])
        if size > best_size:
            best_size = size
            index = _unravel(flat, tuple(et.shape))
            best = {
                "abs": number(size),
                "where": place + (str(list(index)) if index else ""),
                "index": list(index),
                "path": place,
                "expected": number(float(ed.flatten()[flat])),
                "got": number(float(ad.flatten()[flat])),
            }
    return best


def _unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat % size)
        flat //= size
    return tuple(reversed(index))
