# Bug: Frequencies and angles are computed in float32, so for large positions p * theta loses precision before cos and sin are taken and the rotation drifts; a correct version forms the angles in float64 and casts cos and sin to x's dtype.
import torch


def apply_rope(x, positions=None, base=10000.0):
    length, dim = x.shape[-2], x.shape[-1]
    half = dim // 2
    if positions is None:
        positions = torch.arange(length, device=x.device)
    # Angles in float64, then cast: large positions times high frequencies lose precision
    # in float32 before the cos and sin are taken.
    freqs = base ** (-2.0 * torch.arange(half, device=x.device, dtype=torch.float32) / dim)
    angles = positions.to(torch.float32)[:, None] * freqs[None, :]
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
