"""The floating tensors inside a call's arguments, wherever they sit: a positional tensor, or
a weight in a dict or list of parameters (`params["w_q"]`). Gradient checks make each of them
require grad and look for a gradient at each, so that weights passed in a dict are checked as
positional tensors are, not skipped."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch


def _is_leaf(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def floating(value: Any, where: str = "args") -> list[tuple[str, torch.Tensor]]:
    """(place, tensor) for each floating tensor, depth first: `args[0]`, `args[1].w_q`."""
    if _is_leaf(value):
        return [(where, value)]
    if isinstance(value, (list, tuple)):
        return [leaf for i, v in enumerate(value) for leaf in floating(v, f"{where}[{i}]")]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in floating(v, f"{where}.{k}")]
    return []


def replaced(value: Any, new: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """`value` rebuilt with each floating tensor t replaced by new(t), depth first."""
    if _is_leaf(value):
        return new(value)
    if isinstance(value, (list, tuple)):
        return type(value)(replaced(v, new) for v in value)
    if isinstance(value, dict):
        return {k: replaced(v, new) for k, v in value.items()}
    return value


def answered(args: Any, grads: Iterator[Any]) -> Any:
    """The gradients, in the shape of the arguments: a gradient (or None) where a floating
    tensor was, a dict or list of them where a dict or list of tensors was, None elsewhere.
    `grads` holds one entry per floating tensor, in `floating`'s order."""
    if _is_leaf(args):
        return next(grads)
    if isinstance(args, (list, tuple)):
        return [answered(v, grads) for v in args]
    if isinstance(args, dict):
        return {k: answered(v, grads) for k, v in args.items()}
    return None


def paired(args: Any, grads: Any, where: str = "args") -> list[tuple[str, Any]]:
    """(place, the gradient found there or None) for each floating tensor of `args`, read
    from an answer in `answered`'s shape; a missing or malformed entry reads as None."""
    if _is_leaf(args):
        return [(where, grads if isinstance(grads, torch.Tensor) else None)]
    if isinstance(args, (list, tuple)):
        seq = grads if isinstance(grads, (list, tuple)) and len(grads) == len(args) else None
        return [
            pair
            for i, v in enumerate(args)
            for pair in paired(v, seq[i] if seq is not None else None, f"{where}[{i}]")
        ]
    if isinstance(args, dict):
        got = grads if isinstance(grads, dict) else {}
        return [pair for k, v in args.items() for pair in paired(v, got.get(k), f"{where}.{k}")]
    return []
