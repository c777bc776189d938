# Style: einsum for both products, a boolean "allowed" mask, torch.where instead of -inf fills.
import math

import torch


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    B, Lq, d = q.shape
    Lk = k.shape[1]
    scores = torch.einsum("bqd,bkd->bqk", q, k) / math.sqrt(d)

    allowed = torch.ones(B, Lq, Lk, dtype=torch.bool, device=q.device)
    if causal:
        i = torch.arange(Lq, device=q.device)[:, None]
        j = torch.arange(Lk, device=q.device)[None, :]
        allowed = allowed & (j <= i + (Lk - Lq))
    if key_padding_mask is not None:
        allowed = allowed & ~key_padding_mask.to(torch.bool)[:, None, :]

    # row max over the allowed keys only; a row with none gets 0 so nothing turns into NaN
    lowest = torch.finfo(scores.dtype).min
    row_max = torch.where(allowed, scores, torch.full_like(scores, lowest)).amax(-1, keepdim=True)
    row_max = torch.where(allowed.any(-1, keepdim=True), row_max, torch.zeros_like(row_max))
    e = torch.where(allowed, torch.exp(scores - row_max), torch.zeros_like(scores))
    total = e.sum(-1, keepdim=True)
    weights = e / torch.where(total > 0, total, torch.ones_like(total))
    return torch.einsum("bqk,bkv->bqv", weights, v)
