# Style: float64 inside, rank masks built with arange
import torch
import torch.nn.functional as F


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if not (temperature >= 0 and top_k >= 0 and 0 < top_p <= 1):
        raise ValueError("invalid sampling settings")
    if temperature == 0:
        return F.one_hot(torch.argmax(logits, dim=1), logits.shape[1]).to(logits.dtype)
    x = logits.double() / temperature
    v = x.shape[1]
    k = v if top_k == 0 else min(top_k, v)
    # A stable sort puts equal values in index order, the statement's tie rule.
    vals, order = torch.sort(x, dim=1, descending=True, stable=True)
    rank_keep = torch.arange(v, device=x.device).expand_as(vals) < k
    vals = vals.masked_fill(~rank_keep, float("-inf"))
    if top_p < 1:
        p = F.softmax(vals, dim=1)
        excl = torch.cumsum(p, dim=1) - p
        rank_keep = rank_keep & (excl < top_p)
    keep = torch.empty_like(rank_keep).scatter_(1, order, rank_keep)
    out = F.softmax(x.masked_fill(~keep, float("-inf")), dim=1)
    return out.to(logits.dtype)


def sample(probs, uniforms):
    p = probs.double()
    cum = torch.cumsum(p, dim=1)
    u = uniforms.double().unsqueeze(1)
    first = torch.searchsorted(cum, u, right=True).squeeze(1)
    nz = torch.arange(p.shape[1], device=p.device).masked_fill(p == 0, -1).max(dim=1).values
    return torch.where(first > nz, nz, first)


if __name__ == "__main__":
    lg = torch.tensor([[2.0, 1.0, 0.5, 0.5, -1.0], [0.0, 3.0, 3.0, 1.0, 2.0]])
    print(filter_logits(lg, top_p=0.8))
    print(sample(filter_logits(lg, top_p=0.7), torch.tensor([0.75, 0.5])))
