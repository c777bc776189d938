from typing import Any

import torch


def to_device(
    batch: Any,
    device: str | torch.device,
    dtype: torch.dtype | None = None,
    non_blocking: bool = False,
) -> Any:
    """A copy of `batch` with every tensor on `device`.

    batch: a tensor, or dicts, lists, tuples and namedtuples nested in any way, whose leaves
           are tensors (any shape and dtype) or other values (str, int, float, bool, None).
    dtype: when given, the floating-point tensors are cast to it; integer and bool tensors
           keep their dtype.

    Returns the same structure: same container types, same dict key order, other leaves
    unchanged. The input is not modified.
    """
    raise NotImplementedError
