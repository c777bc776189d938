# Bug: The band is symmetric (|i - j| < window), so a query also attends the window - 1 keys after it: the causal half of the mask is missing and future positions leak into each output.
import math

import torch


def sliding_window_attention(q, k, v, window):
    t = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, T, T)
    pos = torch.arange(t, device=q.device)
    # back[i, j] = i - j: how far key j lies behind query i. The band keeps the key itself
    # and the window - 1 keys before it; the future (back < 0) is masked as in any causal
    # attention. One boolean (T, T) mask serves every batch element and head.
    back = pos[:, None] - pos[None, :]
    allowed = back.abs() < window
    # Every query keeps at least its own key (window >= 1), so no row is all -inf.
    scores = scores.masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
