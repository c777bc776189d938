# Style: torch.utils._pytree.tree_map over the leaves; the library rebuilds every container.
import torch
from torch.utils import _pytree as pytree


def to_device(batch, device, dtype=None, non_blocking=False):
    def move(leaf):
        if not isinstance(leaf, torch.Tensor):
            return leaf
        cast = dtype if dtype is not None and leaf.dtype.is_floating_point else leaf.dtype
        return leaf.to(device, cast, non_blocking=non_blocking)

    return pytree.tree_map(move, batch)
