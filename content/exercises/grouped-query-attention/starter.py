import torch


def grouped_query_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False
) -> torch.Tensor:
    """Grouped-query attention.

    q: (B, Hq, T, D); k, v: (B, Hkv, S, D), with Hq a multiple of Hkv.
    Query head h uses key-value head h // (Hq // Hkv); scores are scaled by 1/sqrt(D).
    causal: query i sees key j only when j <= i + (S - T).
    Returns (B, Hq, T, D).
    """
    raise NotImplementedError
