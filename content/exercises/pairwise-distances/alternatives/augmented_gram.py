# Style: one matrix product of augmented coordinates: [a, |a|^2, 1] . [-2b, 1, |b|^2]
# = |a|^2 - 2 a.b + |b|^2, so the whole matrix is a single GEMM (after centring).
import torch


def _augment_left(a: torch.Tensor) -> torch.Tensor:
    ones = torch.ones_like(a[:, :1])
    return torch.cat([a, (a * a).sum(dim=1, keepdim=True), ones], dim=1)


def _augment_right(b: torch.Tensor) -> torch.Tensor:
    ones = torch.ones_like(b[:, :1])
    return torch.cat([-2.0 * b, ones, (b * b).sum(dim=1, keepdim=True)], dim=1)


def pairwise_sq_dists(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    mu = x.mean(dim=0, keepdim=True)
    left = _augment_left(x - mu)  # (N, D + 2)
    right = _augment_right(y - mu)  # (M, D + 2)
    return torch.matmul(left, right.transpose(0, 1)).relu()
