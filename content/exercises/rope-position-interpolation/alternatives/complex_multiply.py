# Style: interleaved pairs read as complex numbers (view_as_complex), times e^{i angle}.
import math

import torch


def rope_tables(
    positions: torch.Tensor,
    head_dim: int,
    base: float = 10000.0,
    scale: float = 1.0,
    ntk_alpha: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    log_base = math.log(base) + head_dim / (head_dim - 2) * math.log(ntk_alpha)
    i = torch.arange(head_dim // 2, dtype=torch.float64, device=positions.device)
    theta = torch.exp(-2.0 * i / head_dim * log_base)
    angle = torch.outer(positions.double() / scale, theta)
    rotor = torch.polar(torch.ones_like(angle), angle)
    return rotor.real.contiguous(), rotor.imag.contiguous()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    z = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], -1, 2).contiguous())
    w = z * torch.complex(cos.to(work), sin.to(work))
    return torch.view_as_real(w).flatten(-2).to(x.dtype)
