# Style: treat (x1, x2) as complex numbers x1 + i*x2 and multiply by e^{i p theta} (torch.polar).
import torch


def apply_rope(
    x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0
) -> torch.Tensor:
    L, d = x.shape[-2], x.shape[-1]
    half = d // 2
    real_dtype = torch.promote_types(x.dtype, torch.float32)  # complex needs float32 or float64
    if positions is None:
        positions = torch.arange(L, device=x.device)
    exponents = torch.arange(half, device=x.device, dtype=torch.float64) * (-2.0 / d)
    theta = torch.pow(torch.tensor(float(base), dtype=torch.float64, device=x.device), exponents)
    angle = positions.to(torch.float64)[:, None] * theta[None, :]  # (L, d/2)
    rotor = torch.polar(torch.ones_like(angle), angle).to(
        torch.complex64 if real_dtype == torch.float32 else torch.complex128
    )
    xr = x.to(real_dtype)
    z = torch.complex(xr[..., :half], xr[..., half:])  # (..., L, d/2)
    w = z * rotor
    return torch.cat([w.real, w.imag], dim=-1).to(x.dtype)
