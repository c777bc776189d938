# Bug: A dict is moved by assigning the moved values back into the caller's dict and returning it, so the caller's batch is changed instead of a new dict being built.
import torch


def to_device(batch, device, dtype=None, non_blocking=False):
    if isinstance(batch, torch.Tensor):
        # Only floating tensors take the model's dtype: labels must stay integers for
        # cross_entropy and masks booleans for indexing.
        if dtype is not None and batch.is_floating_point():
            return batch.to(device=device, dtype=dtype, non_blocking=non_blocking)
        return batch.to(device=device, non_blocking=non_blocking)
    if isinstance(batch, dict):
        # A new dict: the caller's batch is left as it was, and key order is kept.
        for k, v in batch.items():
            batch[k] = to_device(v, device, dtype, non_blocking)
        return batch
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        # A namedtuple's constructor takes its fields as separate arguments, not an iterable.
        return type(batch)(*(to_device(v, device, dtype, non_blocking) for v in batch))
    if isinstance(batch, (list, tuple)):
        return type(batch)(to_device(v, device, dtype, non_blocking) for v in batch)
    return batch  # strings, numbers, None: nothing to move
