# Style: float64 throughout, a loop over the pairs writing each output column, cast back.
import torch

__all__ = ["apply_rope", "rope_tables"]


def rope_tables(positions, head_dim, base=10000.0, scale=1.0, ntk_alpha=1.0):
    new_base = float(base) * float(ntk_alpha) ** (head_dim / (head_dim - 2))
    p = positions.to(torch.float64) / float(scale)
    cols = [p * new_base ** (-2.0 * i / head_dim) for i in range(head_dim // 2)]
    angles = torch.stack(cols, dim=1) if cols else p[:, None]
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    x64 = x.to(torch.float64)
    c, s = cos.to(torch.float64), sin.to(torch.float64)
    out = torch.empty_like(x64)
    for i in range(x.shape[-1] // 2):
        a, b = x64[..., 2 * i], x64[..., 2 * i + 1]
        out[..., 2 * i] = a * c[:, i] - b * s[:, i]
        out[..., 2 * i + 1] = a * s[:, i] + b * c[:, i]
    return out.to(x.dtype)
