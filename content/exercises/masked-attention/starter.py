import torch


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Scaled dot-product attention.

    q: (batch, Lq, d), k: (batch, Lk, d), v: (batch, Lk, dv).
    causal: query i sees key j only when j <= i + (Lk - Lq).
    key_padding_mask: bool (batch, Lk), True where the key is padding.
    Returns (batch, Lq, dv); a query that sees no key outputs zeros.
    """
    raise NotImplementedError
