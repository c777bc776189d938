# Style: every expert runs on every token with einsum, then a dense (N, E) gate matrix zeroes the unchosen ones; softmax over the chosen logits.
import torch


def moe_forward(x, w_router, experts_w1, experts_w2, k):
    n, e = x.shape[0], w_router.shape[0]
    logits = x @ w_router.t()
    probs = logits.softmax(dim=-1)
    idx = logits.sort(dim=-1, descending=True, stable=True).indices[:, :k]
    # softmax over the k chosen logits equals the renormalised chosen probabilities
    gates_k = logits.gather(1, idx).softmax(dim=-1)
    gates = torch.zeros_like(probs).scatter(1, idx, gates_k)            # (N, E)
    hidden = torch.relu(torch.einsum("nd,ehd->neh", x, experts_w1))     # (N, E, h)
    out = torch.einsum("neh,edh->ned", hidden, experts_w2)              # (N, E, d)
    y = torch.einsum("ne,ned->nd", gates, out)
    assigned = torch.zeros(n, e, dtype=x.dtype, device=x.device).scatter(1, idx, 1.0)
    f = assigned.sum(0) / (n * k)
    aux = e * torch.dot(f, probs.mean(0))
    return y, aux
