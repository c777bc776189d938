import torch


def apply_rope(
    x: torch.Tensor, positions: torch.Tensor | None = None, base: float = 10000.0
) -> torch.Tensor:
    """Rotary position embedding, "rotate half" layout.

    x: (..., L, d), d even. positions: int64 (L,), default 0..L-1.
    Returns the same shape and dtype: the halves x[..., :d/2] and x[..., d/2:] rotated
    pairwise by positions * base ** (-2i / d).
    """
    raise NotImplementedError
