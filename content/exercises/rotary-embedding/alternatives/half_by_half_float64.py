# Style: float64 angles and arithmetic, each output half written out from its own formula, cast back.
import torch


def apply_rope(
    x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0
) -> torch.Tensor:
    seq_len, d = x.shape[-2], x.shape[-1]
    h = d // 2
    if positions is None:
        positions = torch.arange(seq_len, device=x.device)
    p = positions.to(device=x.device, dtype=torch.float64).unsqueeze(-1)  # (L, 1)
    inv_freq = float(base) ** (-2.0 * torch.arange(h, device=x.device, dtype=torch.float64) / d)
    cos, sin = torch.cos(p * inv_freq), torch.sin(p * inv_freq)  # (L, h), broadcast over batch
    x64 = x.to(torch.float64)
    x1, x2 = x64[..., :h], x64[..., h:]
    out = torch.empty_like(x64)
    out[..., :h] = x1 * cos - x2 * sin
    out[..., h:] = x1 * sin + x2 * cos
    return out.to(x.dtype)
