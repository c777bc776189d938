# Bug: The queries are scaled in place (q /= sqrt(d)) before the product, overwriting the caller's q tensor (and failing on a q that requires grad); a correct version scales the scores or a new tensor.
import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    lq, lk = q.shape[-2], k.shape[-2]
    q /= math.sqrt(q.shape[-1])
    scores = q @ k.transpose(-2, -1)
    allowed = torch.ones(lq, lk, dtype=torch.bool, device=q.device)
    if causal:
        # Queries are the last lq positions: query i sits at position i + (lk - lq).
        allowed = torch.tril(allowed, diagonal=lk - lq)
    allowed = allowed.expand(scores.shape)
    if key_padding_mask is not None:
        allowed = allowed & ~key_padding_mask[:, None, :]
    # Masked scores become -inf before the softmax, so they get exactly zero weight and
    # the remaining weights still sum to one.
    scores = scores.masked_fill(~allowed, float("-inf"))
    top = scores.amax(dim=-1, keepdim=True)
    # A row with nothing allowed has max -inf; shift it by 0 so it stays all zeros, not NaN.
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    weights = (scores - top).exp()
    total = weights.sum(dim=-1, keepdim=True)
    weights = weights / total.clamp_min(torch.finfo(weights.dtype).tiny)
    return weights @ v
