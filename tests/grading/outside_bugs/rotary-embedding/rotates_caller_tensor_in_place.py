# Bug: The rotated halves are written back into x (x[..., :half] = ...) and x is returned, overwriting the caller's queries or keys (and failing on a leaf that requires grad); a correct version returns a new tensor.
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
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    out1, out2 = x1 * cos - x2 * sin, x1 * sin + x2 * cos
    x[..., :half] = out1
    x[..., half:] = out2
    return x
