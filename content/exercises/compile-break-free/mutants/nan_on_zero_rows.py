import torch


def clip_rows(x, max_norm):
    norms = torch.linalg.vector_norm(x, dim=1, keepdim=True)
    over = norms > max_norm
    # Both sides of a where are computed for every row: divide by a norm that cannot be zero,
    # so all-zero rows (which are never over) produce no NaN in the unused side either.
    # Normalise every row, then scale to min(norm, max_norm): 0 / 0 on all-zero rows.
    clipped = x / norms * norms.clamp(max=max_norm)
    return clipped, over.sum(dtype=torch.int64)
