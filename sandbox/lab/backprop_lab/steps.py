"""The calls that are timed: forward only, or forward + backward of the summed outputs, and
what each side's gradients are read from."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch

from .correctness import detached_copy, tensors_in
from .timing import Step, wall_clock

Leaves = dict[str, Any]  # name -> tensor whose .grad is compared


def map_tensors(value: Any, change: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        return change(value)
    if isinstance(value, list):
        return [map_tensors(v, change) for v in value]
    if isinstance(value, tuple):
        items = [map_tensors(v, change) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, Mapping):
        return {k: map_tensors(v, change) for k, v in value.items()}
    return value


def _parameters(module: Any) -> Leaves:
    """Trainable parameters by name (torch.compile's `_orig_mod.` prefix dropped)."""
    if not isinstance(module, torch.nn.Module):
        return {}
    return {
        name.removeprefix("_orig_mod."): p
        for name, p in module.named_parameters()
        if p.requires_grad
    }


def _scalar_loss(output: Any) -> Any:
    """The sum of every output tensor that requires grad: what backward starts from."""
    parts = [t.sum() for t in tensors_in(output) if t.requires_grad]
    if not parts:
        raise ValueError("backward=True, but no output of fn requires grad")
    loss = parts[0]
    for part in parts[1:]:
        loss = loss + part
    return loss


def _forward_step(fn: Callable[..., Any], inputs: tuple[Any, ...]) -> Step:
    return lambda: fn(*inputs)


def _backward_step(fn: Callable[..., Any], inputs: tuple[Any, ...], named: Leaves) -> Step:
    leaves = list(named.values())

    def forward_backward() -> Any:
        for leaf in leaves:
            leaf.grad = None
        output = fn(*inputs)
        _scalar_loss(output).backward()
        return output

    return forward_backward


def observe(step: Step, leaves: Leaves, device: torch.device) -> tuple[Any, Any, float]:
    """One synchronized call: its output and the leaves' gradients, copied; seconds it took."""
    output, seconds = wall_clock(step, device)
    grads = {name: detached_copy(leaf.grad) for name, leaf in leaves.items()}
    return detached_copy(output), grads, seconds


def make_steps(
    fn: Callable[..., Any], compiled: Callable[..., Any], inputs: tuple[Any, ...], backward: bool
) -> tuple[tuple[Any, ...], tuple[Step, Leaves], tuple[Step, Leaves]]:
    """The inputs as timed, and per side the call to time and the tensors whose gradients are
    compared (none without backward)."""
    if not backward:
        return inputs, (_forward_step(fn, inputs), {}), (_forward_step(compiled, inputs), {})
    if not any(t.requires_grad for t in tensors_in(list(inputs))) and not _parameters(fn):
        inputs = tuple(
            map_tensors(
                list(inputs), lambda t: t.detach().clone().requires_grad_(t.is_floating_point())
            )
        )
    own = {
        f"input {index}": t
        for index, t in enumerate(tensors_in(list(inputs)))
        if t.requires_grad and t.is_leaf
    }
    eager_leaves = {**own, **_parameters(fn)}
    compiled_leaves = {**own, **(_parameters(compiled) or _parameters(fn))}
    return (
        inputs,
        (_backward_step(fn, inputs, eager_leaves), eager_leaves),
        (_backward_step(compiled, inputs, compiled_leaves), compiled_leaves),
    )
