import torch
from torch import nn


def lora_forward(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    lora_A: torch.Tensor,
    lora_B: torch.Tensor,
    alpha: float,
) -> torch.Tensor:
    """x: (..., in); weight: (out, in); bias: (out,) or None; lora_A: (r, in);
    lora_B: (out, r). Returns (..., out) = x W^T + b + (alpha / r) (x A^T) B^T."""
    raise NotImplementedError


class LoRALinear(nn.Module):
    def __init__(
        self, weight: torch.Tensor, bias: torch.Tensor | None, r: int, alpha: float
    ) -> None:
        """Frozen parameters `weight` (out, in) and `bias` (out,); trainable `lora_A` (r, in),
        random, and `lora_B` (out, r), zero."""
        super().__init__()
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (..., in) -> (..., out)."""
        raise NotImplementedError
