# Bug: The key padding mask is broadcast along the query axis ([:, None, :, None]) instead of the key axis, so it blanks out rows of padded queries (or fails when Lq != Lk) rather than giving padded keys no weight.
import math

import torch
import torch.nn.functional as F


def multi_head_attention(
    query, key, value, in_proj_weight, in_proj_bias, out_proj_weight, out_proj_bias,
    num_heads, key_padding_mask=None, causal=False,
):  # fmt: skip
    batch, lq, embed = query.shape
    lk = key.shape[1]
    head = embed // num_heads
    w_q, w_k, w_v = in_proj_weight.chunk(3, dim=0)
    b_q, b_k, b_v = in_proj_bias.chunk(3, dim=0)

    def split(x, length):
        # (batch, L, E) -> (batch, heads, L, head): heads become a batch dimension.
        return x.reshape(batch, length, num_heads, head).transpose(1, 2)

    q = split(F.linear(query, w_q, b_q), lq)
    k = split(F.linear(key, w_k, b_k), lk)
    v = split(F.linear(value, w_v, b_v), lk)
    scores = q @ k.transpose(-2, -1) / math.sqrt(head)
    if causal:
        future = torch.ones(lq, lk, dtype=torch.bool, device=query.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        scores = scores.masked_fill(key_padding_mask[:, None, :, None], float("-inf"))
    heads = scores.softmax(dim=-1) @ v
    # Back to (batch, Lq, E): the heads' outputs side by side, in head order.
    merged = heads.transpose(1, 2).reshape(batch, lq, embed)
    return F.linear(merged, out_proj_weight, out_proj_bias)
