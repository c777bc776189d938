# Style: probabilities computed in ranked order and scattered back, an exclusive cumsum for the nucleus, sampling by counting cumulative sums <= u, written from the statement alone by a reviewer.
import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    if not (0 < top_p <= 1):
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    b, v = logits.shape
    if temperature == 0:
        # argmax returns the first of tied maxima
        hot = torch.zeros_like(logits)
        return hot.scatter_(-1, logits.argmax(dim=-1, keepdim=True), 1.0)
    scaled = logits / temperature
    # Work in ranked order: a stable descending sort keeps tied logits in index order.
    ranked, order = torch.sort(scaled, dim=-1, descending=True, stable=True)
    keep = torch.ones_like(ranked, dtype=torch.bool)
    if 0 < top_k < v:
        keep[:, top_k:] = False
    if top_p < 1:
        p = torch.softmax(ranked.masked_fill(~keep, float("-inf")), dim=-1)
        mass_before = torch.zeros_like(p)
        mass_before[:, 1:] = torch.cumsum(p, dim=-1)[:, :-1]
        keep &= mass_before < top_p
    probs_ranked = torch.softmax(ranked.masked_fill(~keep, float("-inf")), dim=-1)
    return torch.zeros_like(probs_ranked).scatter_(-1, order, probs_ranked)


def sample(probs, uniforms):
    b, v = probs.shape
    cdf = torch.cumsum(probs, dim=-1)
    # smallest j with u < c_j == how many c_j are <= u (the cdf never decreases)
    idx = (cdf <= uniforms[:, None]).sum(dim=-1)
    last_nonzero = v - 1 - torch.flip(probs > 0, dims=[-1]).int().argmax(dim=-1)
    return torch.where(idx >= v, last_nonzero, idx).to(torch.int64)


if __name__ == "__main__":
    logits = torch.tensor([[2.0, 1.0, 0.5, 0.5, -1.0],
                           [0.0, 3.0, 3.0, 1.0, 2.0]])
    print(filter_logits(logits, top_k=3))
    print(filter_logits(logits, top_p=0.8))
    print(filter_logits(logits, top_p=0.7))
    print(filter_logits(logits, temperature=0.5, top_k=3, top_p=0.9))
    print(filter_logits(logits, temperature=0))
    print(sample(filter_logits(logits, top_p=0.7), torch.tensor([0.75, 0.5])))
    print(sample(torch.tensor([[0.25, 0.25, 0.5, 0.0]]), torch.tensor([0.25])))
    print(filter_logits(torch.zeros(0, 4), top_k=2, top_p=0.5).shape, sample(torch.zeros(0, 4), torch.zeros(0)))
