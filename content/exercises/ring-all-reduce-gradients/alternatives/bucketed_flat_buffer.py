# Style: DDP-like bucketing: all of a rank's gradients flattened into one buffer, one ring over a stacked (W, n) tensor.
import torch


def _bounds(n: int, world: int) -> list[tuple[int, int]]:
    """The [start, end) of each of the `world` chunks, as tensor_split cuts n elements."""
    q, extra = divmod(n, world)
    out, start = [], 0
    for c in range(world):
        end = start + q + (1 if c < extra else 0)
        out.append((start, end))
        start = end
    return out


def _ring_rows(buf: torch.Tensor) -> torch.Tensor:
    """buf: (W, n), row r is rank r's data. Ring all-reduce in place on a copy; returns it."""
    W, n = buf.shape
    buf = buf.clone()
    bounds = _bounds(n, W)
    for s in range(W - 1):  # reduce-scatter: rank r -> r + 1 adds chunk (r - s) mod W
        sent = [buf[r, slice(*bounds[(r - s) % W])].clone() for r in range(W)]
        for r in range(W):
            lo, hi = bounds[(r - s) % W]
            buf[(r + 1) % W, lo:hi] += sent[r]
    for s in range(W - 1):  # all-gather: rank r -> r + 1 overwrites chunk (r + 1 - s) mod W
        sent = [buf[r, slice(*bounds[(r + 1 - s) % W])].clone() for r in range(W)]
        for r in range(W):
            lo, hi = bounds[(r + 1 - s) % W]
            buf[(r + 1) % W, lo:hi] = sent[r]
    return buf


def ring_all_reduce(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    rows = _ring_rows(torch.stack([t.reshape(-1) for t in tensors]))
    return [rows[r].clone().reshape(tensors[r].shape) for r in range(len(tensors))]


def average_gradients(per_rank_grads: list[list[torch.Tensor]]) -> list[list[torch.Tensor]]:
    W = len(per_rank_grads)
    shapes = [g.shape for g in per_rank_grads[0]]
    sizes = [g.numel() for g in per_rank_grads[0]]
    # one bucket per rank: every parameter's gradient, flattened and concatenated
    buckets = torch.stack([torch.cat([g.reshape(-1) for g in grads]) for grads in per_rank_grads])
    reduced = _ring_rows(buckets) / W
    result = []
    for r in range(W):
        pieces = torch.split(reduced[r], sizes)
        result.append([p.clone().reshape(shape) for p, shape in zip(pieces, shapes)])
    return result
