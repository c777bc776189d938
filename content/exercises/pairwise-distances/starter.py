import torch


def pairwise_sq_dists(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """x: (N, D), y: (M, D), same floating dtype.

    Returns the (N, M) matrix out[i, j] = sum_k (x[i, k] - y[j, k])^2, in x's dtype,
    never negative.
    """
    raise NotImplementedError
