# Style: einsum over named (batch, head, query, key) axes, weights split with chunk, torch.softmax.
import math

import torch
import torch.nn.functional as F


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
    B, Lq, E = query.shape
    Lk = key.shape[1]
    hd = E // num_heads
    w_q, w_k, w_v = in_proj_weight.chunk(3, dim=0)
    b_q, b_k, b_v = in_proj_bias.chunk(3, dim=0)

    q = F.linear(query, w_q, b_q).view(B, Lq, num_heads, hd)
    k = F.linear(key, w_k, b_k).view(B, Lk, num_heads, hd)
    v = F.linear(value, w_v, b_v).view(B, Lk, num_heads, hd)

    scores = torch.einsum("bqhc,bkhc->bhqk", q, k) / math.sqrt(hd)
    if causal:
        future = torch.triu(torch.ones(Lq, Lk, dtype=torch.bool, device=query.device), 1)
        scores = scores.masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, None, :].bool(), float("-inf"))
    attn = torch.softmax(scores, dim=-1)

    ctx = torch.einsum("bhqk,bkhc->bqhc", attn, v).reshape(B, Lq, E)
    return F.linear(ctx, out_proj_weight, out_proj_bias)
