import torch

from sandbox.grading import case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def layer(d, *, n=None, e=None, k=None, dim=None, h=None, zero_rows=0):
    """x (N, d), a router and E experts of hidden width h, k drawn in [1, E]."""
    n = n if n is not None else d.size(1, 12)
    e = e if e is not None else d.size(1, 7)
    k = k if k is not None else d.integer(1, e)
    dim = dim if dim is not None else d.size(1, 8)
    h = h if h is not None else d.size(1, 9)
    x = d.tensor((n, dim))
    x[:zero_rows] = 0
    router = d.tensor((e, dim), low=-1, high=1)
    w1 = d.tensor((e, h, dim), low=-1, high=1)
    w2 = d.tensor((e, dim, h), low=-1, high=1)
    return case(x, router, w1, w2, k)


def small(d):
    return layer(d, n=d.size(1, 6), e=d.size(2, 5), dim=d.size(1, 4), h=d.size(1, 4))


def trusted(c):
    """Token by token in float64, with Python's sort for the top-k (stable: ties keep the
    lower index) and the loss from its definition."""
    x, router, w1, w2, k = c.args
    x, router, w1, w2 = (t.double() for t in (x, router, w1, w2))
    n, e = x.shape[0], router.shape[0]
    probs = torch.softmax(x @ router.T, dim=-1)
    y = torch.zeros_like(x)
    counts = [0] * e
    for i in range(n):
        p = probs[i].tolist()
        chosen = sorted(range(e), key=lambda j: -p[j])[:k]
        total = sum(p[j] for j in chosen)
        for j in chosen:
            counts[j] += 1
            y[i] += p[j] / total * (torch.relu(w1[j] @ x[i]) @ w2[j].T)
    f = torch.tensor(counts, dtype=torch.float64) / (n * k)
    aux = e * (f * probs.mean(dim=0)).sum()
    return y.to(c.args[0].dtype), aux.to(c.args[0].dtype)


def pair(value, n, dim):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"expected (y, aux_loss), got {type(value).__name__}")
    y, aux = value
    if not isinstance(y, torch.Tensor) or tuple(y.shape) != (n, dim):
        fail(f"y: expected a tensor of shape {(n, dim)}")
    if not isinstance(aux, torch.Tensor) or aux.dim() != 0:
        fail("aux_loss: expected a 0-d tensor")
    return y, aux


def zero_router_is_uniform(sol, c):
    """A zero router gives every expert the same probability: every token ties and goes to
    experts 0..k-1 with gates 1/k, and the loss is exactly E * sum_{e<k} (1/k)(1/E) = 1."""
    x, router, w1, w2, k = c.args
    y, aux = pair(sol.call("moe_forward", x, torch.zeros_like(router), w1, w2, k), *x.shape)
    want = sum(torch.relu(x @ w1[j].T) @ w2[j].T for j in range(k)) / k
    expect_close(y, want, "y with a zero router (the mean of experts 0..k-1)")
    expect_close(aux, torch.ones((), dtype=x.dtype), "aux_loss with a zero router")


def experts_are_a_set(sol, c):
    """Relabelling the experts (router rows and expert weights together) changes nothing,
    ties aside (drawn routers have none)."""
    x, router, w1, w2, k = c.args
    y, aux = pair(sol.call("moe_forward", *c.args), *x.shape)
    order = torch.randperm(router.shape[0])
    y2, aux2 = pair(sol.call("moe_forward", x, router[order], w1[order], w2[order], k),
                    *x.shape)  # fmt: skip
    expect_close(y2, y, "y with the experts relabelled")
    expect_close(aux2, aux, "aux_loss with the experts relabelled")


def tokens_independent(sol, c):
    """y[n] depends on token n alone (the loss is the batch's, y is not)."""
    x = c.args[0]
    y, _ = pair(sol.call("moe_forward", *c.args), *x.shape)
    for i in sorted({0, x.shape[0] // 2, x.shape[0] - 1}):
        alone, _ = pair(sol.call("moe_forward", x[i : i + 1], *c.args[1:]), 1, x.shape[1])
        expect_close(alone, y[i : i + 1], f"token {i} routed alone")


def all_experts_is_dense(sol, c):
    """With k = E every expert runs with gate p[n, e]: the dense soft mixture, and
    f[e] = 1 / E so the loss is sum_e P[e] = 1."""
    x, router, w1, w2, _ = c.args
    e = router.shape[0]
    y, aux = pair(sol.call("moe_forward", x, router, w1, w2, e), *x.shape)
    probs = torch.softmax(x.double() @ router.double().T, dim=-1)
    dense = sum(probs[:, j : j + 1] * (torch.relu(x.double() @ w1[j].double().T)
                                       @ w2[j].double().T) for j in range(e))  # fmt: skip
    expect_close(y, dense.to(x.dtype), "y with k = E against the dense mixture")
    expect_close(aux, torch.ones((), dtype=x.dtype), "aux_loss with k = E")


def tied_router(d):
    """Experts 2j and 2j + 1 share a router row, so their probabilities tie for every token;
    some tokens are zero (all experts tie)."""
    c = layer(d, e=d.choice([4, 6]), zero_rows=d.integer(1, 3), n=d.size(3, 10))
    x, router, w1, w2, _ = c.args
    router = router.clone()
    router[1::2] = router[0::2]
    return case(x, router, w1, w2, d.integer(1, router.shape[0] - 1))


def all_k(d):
    c = layer(d)
    return case(*c.args[:4], c.args[1].shape[0])


def timing_case(d):
    """256 tokens of width 64, 8 experts of width 128, top-2, for the performance test."""
    return layer(d, n=256, e=8, k=2, dim=64, h=128)


DECLARATIONS = [
    values("routing a batch", "moe_forward", layer, expect=trusted, visible=True,
           description="top-k of E experts, renormalised gates, and the aux loss"),
    values("float32 and float64, any k", "moe_forward", layer, expect=trusted, cases=5,
           dtypes=("float32", "float64")),
    shapes("y is (N, d), the loss 0-d, in x's dtype", "moe_forward", layer,
           dtypes=("float32", "float64")),
    gradients("gradients to x, the router and the experts", "moe_forward", small, cases=3),
    gradients("gradients with top-1 routing", "moe_forward",
              lambda d: layer(d, n=d.size(2, 6), e=d.size(2, 5), k=1, dim=3, h=3), cases=2),
    edge("ties go to the lower expert index", "moe_forward", tied_router, expect=trusted,
         cases=4, dtypes=("float32", "float64"), visible=True,
         description="two experts with the same router row, and tokens that are zero"),
    edge("more ties, float64", "moe_forward", tied_router, expect=trusted, cases=4,
         dtypes=("float64",)),
    edge("top-1 routing", "moe_forward", lambda d: layer(d, k=1, n=d.size(2, 12)),
         expect=trusted, cases=3),
    edge("every expert chosen (k = E)", "moe_forward", all_k, expect=trusted, cases=2),
    edge("one token", "moe_forward", lambda d: layer(d, n=1), expect=trusted, cases=3),
    prop("a zero router routes to experts 0..k-1 and the loss is 1", zero_router_is_uniform,
         layer, cases=3),
    prop("relabelling the experts changes nothing", experts_are_a_set, layer, cases=3),
    prop("each token's output depends on that token alone", tokens_independent, layer,
         cases=3),
    prop("k = E is the dense soft mixture", all_experts_is_dense, layer, cases=3,
         dtypes=("float64",)),
    nontrivial("the output is not zero", "moe_forward", layer),
    performance("time against the reference", "moe_forward", timing_case, calls=4,
                description="256 tokens, 8 experts, top-2; reported with its spread, not "
                "graded in this exercise"),
]
