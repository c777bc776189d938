# Style: a chain of logits processors, one small class per filter
import torch

NEG_INF = float("-inf")


class TopK:
    def __init__(self, k):
        self.k = k

    def __call__(self, scores):
        v = scores.shape[-1]
        if self.k == 0 or self.k >= v:
            return scores
        order = torch.argsort(scores, dim=-1, descending=True, stable=True)
        drop = order[:, self.k :]
        return scores.scatter(-1, drop, NEG_INF)


class TopP:
    def __init__(self, p):
        self.p = p

    def __call__(self, scores):
        if self.p == 1:
            return scores
        ranked, order = scores.sort(dim=-1, descending=True, stable=True)
        probs = ranked.softmax(-1)
        # Shift the inclusive cumulative sum right by one: the mass before each rank.
        before = torch.cat([torch.zeros_like(probs[:, :1]), probs.cumsum(-1)[:, :-1]], dim=-1)
        drop_ranked = before >= self.p
        drop = torch.empty_like(drop_ranked).scatter_(-1, order, drop_ranked)
        return scores.masked_fill(drop, NEG_INF)


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature < 0:
        raise ValueError("temperature < 0")
    if top_k < 0:
        raise ValueError("top_k < 0")
    if top_p <= 0 or top_p > 1:
        raise ValueError("top_p outside (0, 1]")
    if temperature == 0:
        return torch.nn.functional.one_hot(logits.argmax(-1), logits.shape[-1]).to(logits.dtype)
    scores = logits / temperature
    for step in (TopK(top_k), TopP(top_p)):
        scores = step(scores)
    return scores.softmax(-1)


def sample(probs, uniforms):
    cum = probs.cumsum(-1)
    index = torch.searchsorted(cum, uniforms.to(cum.dtype)[:, None].contiguous(), right=True)
    v = probs.shape[-1]
    has_mass = probs > 0
    last = v - 1 - torch.argmax(has_mass.flip(-1).int(), dim=-1, keepdim=True)
    return index.clamp(max=last).squeeze(-1)
