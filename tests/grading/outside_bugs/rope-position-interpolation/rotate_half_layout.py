# Bug: apply_rope pairs coordinate i with coordinate i + D/2 (the "rotate half" layout of GPT-NeoX / Llama) instead of the interleaved pairs (2i, 2i + 1) the statement asks for.
import torch


def rope_tables(positions, head_dim, base=10000.0, scale=1.0, ntk_alpha=1.0):
    # NTK-aware scaling raises the base so that the slowest pair is slowed by exactly
    # ntk_alpha while the fastest pair (i = 0, frequency 1) is left as it is.
    base = base * ntk_alpha ** (head_dim / (head_dim - 2))
    exponents = torch.arange(0, head_dim, 2, dtype=torch.float64, device=positions.device)
    inv_freq = base ** (-exponents / head_dim)
    # Linear interpolation squeezes the positions back into the trained range. Everything
    # in float64: positions in the thousands times a frequency near 1 lose digits in float32.
    angles = (positions.to(torch.float64) / scale)[:, None] * inv_freq[None, :]
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    cos, sin = cos.to(x.dtype), sin.to(x.dtype)
    # Interleaved layout: coordinates (2i, 2i + 1) form the pair rotated by angle i.
    half = x.shape[-1] // 2
    even, odd = x[..., :half], x[..., half:]
    out_even = even * cos - odd * sin
    out_odd = even * sin + odd * cos
    return torch.cat([out_even, out_odd], dim=-1)
