# Bug: The angles are computed in float32 (positions and frequencies cast to float32) and only the cos and sin are cast to float64, so positions in the thousands get angles off by about 1e-4 radians.
import torch


def rope_tables(positions, head_dim, base=10000.0, scale=1.0, ntk_alpha=1.0):
    # NTK-aware scaling raises the base so that the slowest pair is slowed by exactly
    # ntk_alpha while the fastest pair (i = 0, frequency 1) is left as it is.
    base = base * ntk_alpha ** (head_dim / (head_dim - 2))
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float64, device=positions.device)
    inv_freq = base ** (-exponents / head_dim)
    # Linear interpolation squeezes the positions back into the trained range. Everything
    # in float64: positions in the thousands times a frequency near 1 lose digits in float32.
    angles = (positions.to(torch.float32) / scale)[:, None] * inv_freq[None, :].float()
    return angles.cos().double(), angles.sin().double()


def apply_rope(x, cos, sin):
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    # Interleaved layout: coordinates (2i, 2i + 1) form the pair rotated by angle i.
    even, odd = x[..., 0::2], x[..., 1::2]
    out_even = even * cos - odd * sin
    out_odd = even * sin + odd * cos
    return torch.stack([out_even, out_odd], dim=-1).flatten(-2)
