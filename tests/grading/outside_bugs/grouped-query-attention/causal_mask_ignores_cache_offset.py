# Bug: The causal mask is the square j <= i (tril with no offset) instead of j <= i + (S - T), so when the queries are the last T of S > T positions (decoding against a cache) each query is kept from the keys just before it; T = 1 sees only key 0.
import math

import torch


def grouped_query_attention(q, k, v, causal=False):
    b, hq, t, d = q.shape
    hkv, s = k.shape[1], k.shape[2]
    group = hq // hkv
    # Query heads g*group .. g*group + group - 1 share kv head g. Viewing the query heads as
    # (Hkv, group) lets each kv head broadcast over its group: one batched matmul for all
    # heads, and K/V are never copied group times (that copy is what GQA exists to avoid).
    qg = q.reshape(b, hkv, group, t, d)
    scores = qg @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(d)  # (B, Hkv, group, T, S)
    if causal:
        # The queries are the last T of S positions: query i sits at position i + (S - T).
        allowed = torch.ones(t, s, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~allowed, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = weights @ v.unsqueeze(2)  # (B, Hkv, group, T, Dv)
    return out.reshape(b, hq, t, v.shape[-1])
