# Bug: f[e] divides the count of assignments by N (tokens) instead of N·k (token, slot) assignments, so the f sum to k and the balancing loss is k times too large for k >= 2.
import torch


def moe_forward(x, w_router, experts_w1, experts_w2, k):
    n, num_experts = x.shape[0], w_router.shape[0]
    probs = torch.softmax(x @ w_router.T, dim=-1)  # (N, E)
    # A stable descending sort keeps equal probabilities in expert order, so ties go to
    # the lower index (torch.topk promises no order among ties).
    chosen = torch.sort(probs, dim=-1, descending=True, stable=True).indices[:, :k]  # (N, k)
    top = probs.gather(1, chosen)
    # Renormalised over the k chosen experts, so each token's gates sum to one.
    gates = top / top.sum(dim=-1, keepdim=True)

    y = torch.zeros_like(x)
    # Loop over experts, never over tokens: each expert runs once on the rows routed to it.
    for e in range(num_experts):
        hit = chosen == e  # (N, k); an expert fills at most one slot of a token
        rows = hit.any(dim=-1).nonzero().squeeze(-1)
        if rows.numel() == 0:
            continue
        weight = (gates * hit).sum(dim=-1)[rows, None]
        hidden = torch.relu(x[rows] @ experts_w1[e].T)
        y = y.index_add(0, rows, weight * (hidden @ experts_w2[e].T))

    # Switch-style balance: f_e counts (token, slot) assignments (N * k of them, not
    # differentiable), P_e is the mean router probability (differentiable).
    counts = torch.bincount(chosen.flatten(), minlength=num_experts)
    f = counts.to(x.dtype) / n
    p = probs.mean(dim=0)
    aux = num_experts * (f * p).sum()
    return y, aux
