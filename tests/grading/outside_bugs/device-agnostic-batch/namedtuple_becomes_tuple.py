# Bug: Every tuple, namedtuples included, is rebuilt as a plain tuple, so moved.image no longer works on a namedtuple; a namedtuple must come back as an instance of its own class.
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
        return {k: to_device(v, device, dtype, non_blocking) for k, v in batch.items()}
    if isinstance(batch, list):
        return [to_device(v, device, dtype, non_blocking) for v in batch]
    if isinstance(batch, tuple):
        return tuple(to_device(v, device, dtype, non_blocking) for v in batch)
    return batch  # strings, numbers, None: nothing to move
