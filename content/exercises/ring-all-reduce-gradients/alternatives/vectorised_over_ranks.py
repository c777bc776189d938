# Style: all ranks in one (W ranks, W chunks, width) tensor, chunks padded to one width; each ring step is one indexed op; __all__.
import torch

__all__ = ["ring_all_reduce", "average_gradients"]


def _chunk_layout(n: int, world: int) -> tuple[torch.Tensor, torch.Tensor]:
    """tensor_split's cut of n elements into `world` chunks, padded to a common width.

    Returns (index, valid), both (world, width): index[c, j] is the flat position of
    element j of chunk c, valid[c, j] whether that slot is a real element, not padding.
    """
    q, extra = divmod(n, world)
    sizes = torch.tensor([q + 1] * extra + [q] * (world - extra))
    starts = torch.cumsum(sizes, 0) - sizes
    width = q + (1 if extra else 0)
    j = torch.arange(width)
    valid = j[None, :] < sizes[:, None]
    index = (starts[:, None] + j[None, :]).clamp(max=max(n - 1, 0))
    return index, valid


def ring_all_reduce(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    W = len(tensors)
    shape = tensors[0].shape
    flat = torch.stack([t.reshape(-1) for t in tensors])  # (W, n)
    n = flat.shape[1]
    if n == 0:
        return [t.clone() for t in tensors]
    index, valid = _chunk_layout(n, W)
    index, valid = index.to(flat.device), valid.to(flat.device)
    # buf[r, c]: rank r's copy of chunk c (padding slots hold zeros and are dropped at the end)
    buf = torch.where(valid, flat[:, index], torch.zeros((), dtype=flat.dtype, device=flat.device))

    ranks = torch.arange(W, device=flat.device)
    right = (ranks + 1) % W
    for s in range(W - 1):  # reduce-scatter
        c = (ranks - s) % W
        sent = buf[ranks, c]  # advanced indexing copies: every send of the step is read first
        buf[right, c] = buf[right, c] + sent
    for s in range(W - 1):  # all-gather
        c = (ranks + 1 - s) % W
        buf[right, c] = buf[ranks, c]

    out = buf[:, valid]  # (W, n), chunks back in order
    return [out[r].reshape(shape) for r in range(W)]


def average_gradients(per_rank_grads: list[list[torch.Tensor]]) -> list[list[torch.Tensor]]:
    W = len(per_rank_grads)
    reduced = [ring_all_reduce([grads[i] for grads in per_rank_grads]) for i in range(len(per_rank_grads[0]))]
    return [[summed[r] / W for summed in reduced] for r in range(W)]
