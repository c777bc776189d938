# Style: band from tril and triu, softmax written out
import math

import torch


def sliding_window_attention(q, k, v, window):
    t = q.size(-2)
    ones = torch.ones(t, t, dtype=torch.bool, device=q.device)
    # Lower triangle (causal) minus everything window or more below the diagonal.
    band = torch.tril(ones) & torch.triu(ones, diagonal=1 - window)
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.size(-1)))
    scores = scores.masked_fill(band.logical_not(), -math.inf)
    scores = scores - scores.amax(-1, keepdim=True)
    w = torch.exp(scores)
    return torch.matmul(w / w.sum(-1, keepdim=True), v)
