# Bug: cos and sin are left in float64, so the rotation promotes a float32 (or half) x to a float64 output; a correct version casts them to x's dtype so the output keeps the input's dtype.
import torch


def apply_rope(x, positions=None, base=10000.0):
    length, dim = x.shape[-2], x.shape[-1]
    half = dim // 2
    if positions is None:
        positions = torch.arange(length, device=x.device)
    # Angles in float64, then cast: large positions times high frequencies lose precision
    # in float32 before the cos and sin are taken.
    freqs = base ** (-2.0 * torch.arange(half, device=x.device, dtype=torch.float64) / dim)
    angles = positions.to(torch.float64)[:, None] * freqs[None, :]
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
