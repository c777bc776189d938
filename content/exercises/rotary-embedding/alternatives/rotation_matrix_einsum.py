# Style: an explicit 2x2 rotation matrix per (position, frequency), applied with einsum; self-test.
import math

import torch


def _frequencies(d: int, base: float, device: torch.device) -> torch.Tensor:
    i = torch.arange(d // 2, device=device, dtype=torch.float64)
    return torch.exp(-(2.0 * i / d) * math.log(base))  # base ** (-2i/d)


def _rotations(angle: torch.Tensor) -> torch.Tensor:
    """angle (L, h) -> R (L, h, 2, 2) with R = [[cos, -sin], [sin, cos]]."""
    c, s = torch.cos(angle), torch.sin(angle)
    return torch.stack([torch.stack([c, -s], dim=-1), torch.stack([s, c], dim=-1)], dim=-2)


def apply_rope(
    x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0
) -> torch.Tensor:
    L, d = x.shape[-2:]
    if positions is None:
        positions = torch.arange(L, device=x.device)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    angle = positions.to(torch.float64)[:, None] * _frequencies(d, base, x.device)[None, :]
    rot = _rotations(angle).to(work)  # (L, d/2, 2, 2)
    pairs = torch.stack(torch.chunk(x.to(work), 2, dim=-1), dim=-1)  # (..., L, d/2, 2): (x1, x2)
    turned = torch.einsum("lhij,...lhj->...lhi", rot, pairs)
    return torch.cat([turned[..., 0], turned[..., 1]], dim=-1).to(x.dtype)


if __name__ == "__main__":
    x = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    print(apply_rope(x))  # [[1, 0], [0.5403, 0.8415]]
    q, k = torch.randn(1, 4, 8), torch.randn(1, 4, 8)
    # the score of query i and key j depends only on i - j
    a = apply_rope(q, torch.tensor([3, 3, 3, 3]))[0, 0] @ apply_rope(k, torch.tensor([1, 1, 1, 1]))[0, 0]
    b = apply_rope(q, torch.tensor([7, 7, 7, 7]))[0, 0] @ apply_rope(k, torch.tensor([5, 5, 5, 5]))[0, 0]
    print(float(a), float(b))
