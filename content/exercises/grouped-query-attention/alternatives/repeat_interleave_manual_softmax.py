# Style: repeat_interleave to one kv head per query head, softmax written out
import math

import torch


def grouped_query_attention(q, k, v, causal=False):
    """Expand K and V to one head per query head, then plain multi-head attention."""
    group = q.shape[1] // k.shape[1]
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    scores = torch.matmul(q, k.transpose(2, 3)) * (1.0 / math.sqrt(q.shape[3]))
    if causal:
        t, s = q.shape[2], k.shape[2]
        i = torch.arange(t).unsqueeze(1)
        j = torch.arange(s).unsqueeze(0)
        scores = scores.masked_fill(j > i + (s - t), -math.inf)
    scores = scores - scores.max(dim=3, keepdim=True).values
    w = scores.exp()
    return torch.matmul(w / w.sum(dim=3, keepdim=True), v)
