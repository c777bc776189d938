# Style: review solution from the statement alone; torch.complex(cos, sin) times the pairs viewed as complex numbers, tables from torch.outer.
import torch


def rope_tables(positions, head_dim, base=10000.0, scale=1.0, ntk_alpha=1.0):
    b = base * ntk_alpha ** (head_dim / (head_dim - 2))
    i = torch.arange(head_dim // 2, dtype=torch.float64, device=positions.device)
    theta = b ** (-2.0 * i / head_dim)
    p = positions.to(torch.float64) / scale
    angles = torch.outer(p, theta)
    return angles.cos(), angles.sin()


def apply_rope(x, cos, sin):
    # Treat each interleaved pair as one complex number and multiply by e^{i angle}.
    rot = torch.complex(cos.to(x.dtype), sin.to(x.dtype))  # (T, D/2)
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2).contiguous())
    return torch.view_as_real(pairs * rot).reshape(x.shape)
