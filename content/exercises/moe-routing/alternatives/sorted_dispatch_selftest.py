# Style: flattens the (token, slot) assignments, sorts them by expert and runs contiguous segments (the grouped-GEMM layout); a __main__ self-test.
import torch


def moe_forward(x, w_router, experts_w1, experts_w2, k):
    n, num_e = x.shape[0], w_router.shape[0]
    probs = torch.softmax(x @ w_router.T, dim=1)
    top_i = torch.sort(probs, dim=1, descending=True, stable=True).indices[:, :k]
    top_p = torch.gather(probs, 1, top_i)
    top_p = top_p / top_p.sum(1, keepdim=True)
    flat_e = top_i.reshape(-1)                                   # (N k,)
    flat_tok = torch.arange(n, device=x.device).repeat_interleave(k)              # token of each slot
    flat_g = top_p.reshape(-1)
    order = torch.argsort(flat_e, stable=True)
    sizes = torch.bincount(flat_e, minlength=num_e).tolist()
    pieces = []
    start = 0
    for e, size in enumerate(sizes):
        sl = order[start:start + size]
        start += size
        toks = flat_tok[sl]
        h = torch.relu(x[toks] @ experts_w1[e].T) @ experts_w2[e].T
        pieces.append((toks, flat_g[sl].unsqueeze(1) * h))
    y = x.new_zeros(x.shape)
    for toks, val in pieces:
        y = y.index_add(0, toks, val)
    f = torch.tensor(sizes, dtype=x.dtype, device=x.device) / (n * k)
    aux = num_e * (f * probs.mean(0)).sum()
    return y, aux


if __name__ == "__main__":
    x = torch.randn(5, 4)
    y, aux = moe_forward(x, torch.randn(3, 4), torch.randn(3, 6, 4), torch.randn(3, 4, 6), 2)
    print(y.shape, float(aux))
