# Bug: Query head h is paired with kv head h % Hkv (the query heads viewed as (G, Hkv), so groups are interleaved) instead of h // G (consecutive heads share a kv head), which gives wrong outputs whenever 1 < Hkv < Hq.
import math

import torch


def grouped_query_attention(q, k, v, causal=False):
    b, hq, t, d = q.shape
    hkv, s = k.shape[1], k.shape[2]
    group = hq // hkv
    qg = q.reshape(b, group, hkv, t, d)
    scores = qg @ k.unsqueeze(1).transpose(-2, -1) / math.sqrt(d)  # (B, group, Hkv, T, S)
    if causal:
        allowed = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(s - t)
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v.unsqueeze(1)  # (B, group, Hkv, T, Dv)
    return out.reshape(b, hq, t, v.shape[-1])
