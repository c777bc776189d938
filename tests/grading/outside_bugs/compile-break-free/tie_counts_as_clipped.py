# Bug: Rows are clipped when their norm is >= max_norm instead of strictly greater, so a row whose norm equals max_norm is counted as clipped; a correct version uses norms > max_norm.
import torch


def clip_rows(x, max_norm):
    norms = torch.linalg.vector_norm(x, dim=1, keepdim=True)
    over = norms >= max_norm
    # Both sides of a where are computed for every row: divide by a norm that cannot be zero,
    # so all-zero rows (which are never over) produce no NaN in the unused side either.
    scale = torch.where(over, max_norm / norms.clamp_min(torch.finfo(x.dtype).tiny), 1.0)
    # The count stays a tensor: turning it into a Python int would leave the graph.
    return x * scale.to(x.dtype), over.sum(dtype=torch.int64)
