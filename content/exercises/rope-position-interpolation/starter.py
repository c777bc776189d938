import torch


def rope_tables(
    positions: torch.Tensor,
    head_dim: int,
    base: float = 10000.0,
    scale: float = 1.0,
    ntk_alpha: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The cos and sin tables of RoPE with position interpolation and NTK-aware scaling.

    positions: (T,) int64 or floating. head_dim: even, at least 4.
    Returns (cos, sin), each float64 of shape (T, head_dim // 2), of the angles
    (positions / scale) * b ** (-2i / head_dim), i = 0 .. head_dim/2 - 1,
    with b = base * ntk_alpha ** (head_dim / (head_dim - 2)).
    """
    raise NotImplementedError


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x with the tables, interleaved layout.

    x: (B, H, T, D). cos, sin: (T, D // 2), any floating dtype.
    Returns (B, H, T, D) in x's dtype: the pair (x[..., 2i], x[..., 2i + 1]) rotated by the
    angle whose cos and sin are cos[:, i] and sin[:, i].
    """
    raise NotImplementedError
