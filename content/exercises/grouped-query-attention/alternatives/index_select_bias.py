# Style: index_select of the kv heads through a helper class, additive -inf bias
import math

import torch


class _HeadMap:
    """Which kv head each query head reads, as an index tensor."""

    def __init__(self, hq, hkv, device):
        self.index = torch.arange(hq, device=device) // (hq // hkv)

    def gather(self, x):
        return x.index_select(1, self.index)


def grouped_query_attention(q, k, v, causal=False):
    heads = _HeadMap(q.shape[1], k.shape[1], q.device)
    k, v = heads.gather(k), heads.gather(v)
    t, s = q.shape[-2], k.shape[-2]
    bias = torch.zeros(t, s, dtype=q.dtype, device=q.device)
    if causal:
        pos_q = torch.arange(t, device=q.device)[:, None] + (s - t)
        pos_k = torch.arange(s, device=q.device)[None, :]
        bias = bias.masked_fill(pos_k > pos_q, float("-inf"))
    scores = (q / math.sqrt(q.shape[-1])) @ k.mT + bias
    return torch.softmax(scores, dim=-1) @ v
