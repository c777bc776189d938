# Style: module-level __all__; norms and scale factors computed in float64 with
# torch.linalg.vector_norm, the clipped rows cast back to the input dtype.
import torch

__all__ = ["clip_rows"]


def _scale_factors(norm64: torch.Tensor, max_norm: float) -> torch.Tensor:
    """1 for rows to keep, max_norm / norm for rows to clip (never divides a zero norm)."""
    keep = norm64 <= max_norm
    return torch.where(keep, torch.ones_like(norm64), max_norm / torch.where(keep, 1.0, norm64))


def clip_rows(x, max_norm):
    x64 = x.to(torch.float64)
    norm64 = torch.linalg.vector_norm(x64, ord=2, dim=-1)
    factors = _scale_factors(norm64, max_norm)
    clipped = (x64 * factors[:, None]).to(x.dtype)
    count = torch.count_nonzero(norm64 > max_norm)
    return clipped, count
