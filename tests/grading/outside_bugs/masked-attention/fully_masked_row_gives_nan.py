# Bug: The row maximum is subtracted without guarding rows where every key is masked, so such a row computes -inf - (-inf) = NaN instead of the zeros the statement asks for.
import math

import torch


def attention(q, k, v, causal=False, key_padding_mask=None):
    lq, lk = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
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
    weights = (scores - top).exp()
    total = weights.sum(dim=-1, keepdim=True)
    weights = weights / total.clamp_min(torch.finfo(weights.dtype).tiny)
    return weights @ v
