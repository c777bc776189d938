# Bug: When dtype is given every tensor is cast to it, so integer labels and bool masks become floating point instead of keeping their dtype.
import torch


def to_device(batch, device, dtype=None, non_blocking=False):
    if isinstance(batch, torch.Tensor):
        # Only floating tensors take the model's dtype: labels must stay integers for
        # cross_entropy and masks booleans for indexing.
        if dtype is not None:
            return batch.to(device=device, dtype=dtype, non_blocking=non_blocking)
        return batch.to(device=device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        # A new dict: the caller's batch is left as it was, and key order is kept.
        return {k: to_device(v, device, dtype, non_blocking) for k, v in batch.items()}
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        # A namedtuple's constructor takes its fields as separate arguments, not an iterable.
        return type(batch)(*(to_device(v, device, dtype, non_blocking) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, dtype, non_blocking) for v in batch)
    return batch  # strings, numbers, None: nothing to move
