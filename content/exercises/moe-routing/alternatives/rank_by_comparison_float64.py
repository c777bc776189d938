# Style: an expert is chosen when fewer than k experts beat it (higher probability, or equal and lower index), from an (N, E, E) comparison; float64 inside; __all__.
import torch

__all__ = ["moe_forward"]


def _chosen_mask(probs, k):
    e = probs.shape[-1]
    a = probs.unsqueeze(-1)          # p[n, i]
    b = probs.unsqueeze(-2)          # p[n, j]
    index = torch.arange(e, device=probs.device)
    lower = index.unsqueeze(0) < index.unsqueeze(1)      # [i, j]: j < i
    beats = (b > a) | ((b == a) & lower)                  # j beats i
    return beats.sum(-1) < k                              # (N, E) bool


def moe_forward(x, w_router, experts_w1, experts_w2, k):
    dtype = x.dtype
    x64 = x.double()
    probs = torch.softmax(x64 @ w_router.double().T, dim=-1)
    mask = _chosen_mask(probs, k)
    kept = probs * mask
    gates = kept / kept.sum(-1, keepdim=True)
    y = torch.zeros_like(x64)
    for e in range(w_router.shape[0]):
        g = gates[:, e:e + 1]
        h = torch.relu(x64 @ experts_w1[e].double().T)
        y = y + torch.where(mask[:, e:e + 1], g * (h @ experts_w2[e].double().T), 0.0)
    f = mask.double().mean(0) / k
    aux = w_router.shape[0] * (f * probs.mean(0)).sum()
    return y.to(dtype), aux.to(dtype)
