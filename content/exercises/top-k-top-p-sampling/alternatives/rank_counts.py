# Style: counts instead of masks - how many ranks survive each filter, then one comparison
"""Each filter yields a per-row count of surviving ranks; the kept set is `rank < count`,
read back in vocabulary order through the inverse permutation (a gather, not a scatter)."""

import torch

__all__ = ["filter_logits", "sample"]


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature < 0 or top_k < 0 or not (0 < top_p <= 1):
        raise ValueError("need temperature >= 0, top_k >= 0 and 0 < top_p <= 1")
    b, v = logits.shape
    if temperature == 0:
        out = torch.zeros_like(logits)
        return out.scatter_(-1, logits.argmax(-1, keepdim=True), 1.0)
    s = logits / temperature
    ranked, order = s.sort(dim=-1, descending=True, stable=True)
    count = torch.full((b, 1), v, dtype=torch.long, device=s.device)
    if 0 < top_k < v:
        count.fill_(top_k)
    ranks = torch.arange(v, device=s.device).expand(b, v)
    if top_p < 1:
        p = torch.softmax(ranked.masked_fill(ranks >= count, float("-inf")), -1)
        inclusive = p.cumsum(-1)
        # Ranks whose mass before them is below top_p: a prefix, so counting them suffices.
        count = ((inclusive - p) < top_p).sum(-1, keepdim=True).clamp(max=count)
    rank_of = torch.empty_like(order).scatter_(-1, order, ranks)
    keep = rank_of < count
    return torch.softmax(s.masked_fill(~keep, float("-inf")), -1)


def sample(probs, uniforms):
    cum = probs.cumsum(-1)
    # Count the cumulative sums <= u: that is the index of the first one above u.
    pick = (cum <= uniforms.to(cum.dtype)[:, None]).sum(-1)
    positions = torch.arange(probs.shape[-1], device=probs.device)
    last_nonzero = torch.where(probs > 0, positions, -1).amax(-1)
    return torch.minimum(pick, last_nonzero)
