# Style: banded, only T x window scores from unfold, __all__ and __main__
__all__ = ["sliding_window_attention"]

import torch
import torch.nn.functional as F


def sliding_window_attention(q, k, v, window):
    """Only T * w scores: each query is scored against its own slice of w keys."""
    t, d = q.shape[-2], q.shape[-1]
    w = min(window, t)
    # Pad w - 1 positions in front, then slice (T, w) windows: slice i holds keys i-w+1 .. i.
    kp = F.pad(k, (0, 0, w - 1, 0))
    vp = F.pad(v, (0, 0, w - 1, 0))
    kw = kp.unfold(-2, w, 1)  # (B, H, T, D, w)
    vw = vp.unfold(-2, w, 1)
    scores = (q.unsqueeze(-1) * kw).sum(dim=-2) / d**0.5
    # Slot s of query i is key i - w + 1 + s; slots before key 0 are padding.
    slot = torch.arange(w, device=q.device)
    pad = (torch.arange(t, device=q.device)[:, None] - (w - 1) + slot[None, :]) < 0
    scores = scores.masked_fill(pad, float("-inf"))
    probs = scores.softmax(dim=-1)
    return (probs.unsqueeze(-2) * vw).sum(dim=-1)


if __name__ == "__main__":
    q = torch.ones(1, 1, 4, 1)
    print(sliding_window_attention(q, q, torch.arange(1.0, 5.0).view(1, 1, 4, 1), 2))
