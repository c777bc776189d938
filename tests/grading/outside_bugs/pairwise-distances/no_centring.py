# Bug: The sets are not centred before the expansion, so for points far from the origin (coordinates near 1000 in float32) |a|^2 + |b|^2 - 2a.b cancels catastrophically and the distances lose every significant digit.
import torch


def pairwise_sq_dists(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    # Distances do not change when both sets move by the same vector. Centring on x's mean
    # keeps the norms small, so the expansion below does not cancel catastrophically when
    # the points sit far from the origin (|a|^2 ~ 1e7 against a distance of ~10 in float32).
    # (With N = 0 the centre is NaN, but then the output is empty and never sees it.)
    # |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one (N, D) x (D, M) matrix product does the work,
    # instead of an (N, M, D) difference tensor.
    x_sq = (x * x).sum(dim=1, keepdim=True)  # (N, 1)
    y_sq = (y * y).sum(dim=1)  # (M,)
    d = x_sq + y_sq - 2.0 * (x @ y.T)
    # Rounding can leave tiny negatives where the true distance is 0.
    return d.clamp_min(0.0)
