# Style: functools.singledispatch, one registered handler per container type.
from functools import singledispatch

import torch

__all__ = ["to_device"]


@singledispatch
def _move(value, device, dtype, non_blocking):
    return value  # str, int, float, None, ...


@_move.register
def _(value: torch.Tensor, device, dtype, non_blocking):
    floating = value.dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
    if dtype is None or not floating:
        return value.to(device, non_blocking=non_blocking)
    return value.to(device, dtype, non_blocking=non_blocking)


@_move.register
def _(value: dict, device, dtype, non_blocking):
    out = {}
    for key in value:
        out[key] = _move(value[key], device, dtype, non_blocking)
    return out


@_move.register
def _(value: list, device, dtype, non_blocking):
    return [_move(v, device, dtype, non_blocking) for v in value]


@_move.register
def _(value: tuple, device, dtype, non_blocking):
    items = [_move(v, device, dtype, non_blocking) for v in value]
    return type(value)._make(items) if hasattr(type(value), "_make") else tuple(items)


def to_device(batch, device, dtype=None, non_blocking=False):
    return _move(batch, device, dtype, non_blocking)
