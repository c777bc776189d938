import torch


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """shape: (out, in) or (out, in, *kernel). Returns (fan_in, fan_out)."""
    raise NotImplementedError


def kaiming_normal_(
    weight: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Fill weight (out, in, *kernel) in place with N(0, 2 / fan_in); return it."""
    raise NotImplementedError


def xavier_uniform_(
    weight: torch.Tensor, gain: float = 1.0, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Fill weight (out, in, *kernel) in place with U(-a, a), a = gain * sqrt(6 / (fan_in +
    fan_out)); return it."""
    raise NotImplementedError
