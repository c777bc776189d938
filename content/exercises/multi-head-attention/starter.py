import torch


def multi_head_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    in_proj_weight: torch.Tensor,
    in_proj_bias: torch.Tensor,
    out_proj_weight: torch.Tensor,
    out_proj_bias: torch.Tensor,
    num_heads: int,
    key_padding_mask: torch.Tensor | None = None,
    causal: bool = False,
) -> torch.Tensor:
    """nn.MultiheadAttention(E, num_heads, batch_first=True)'s output, weights injected.

    query: (batch, Lq, E); key, value: (batch, Lk, E).
    in_proj_weight: (3E, E) = [W_q; W_k; W_v], in_proj_bias: (3E,).
    out_proj_weight: (E, E), out_proj_bias: (E,).
    key_padding_mask: bool (batch, Lk), True for padding. causal: query i sees keys 0..i.
    Returns (batch, Lq, E).
    """
    raise NotImplementedError
