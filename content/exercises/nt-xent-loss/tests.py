import math

import torch

from sandbox.grading import (
    case,
    edge,
    expect_close,
    fail,
    gradients,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)


def views(d, n=None, dim=None, noise=0.5, scale=2.0, **kwargs):
    """Two views: view 2 is view 1 plus noise, so positives are similar but not equal."""
    n = n if n is not None else d.size(2, 24)
    dim = dim if dim is not None else d.size(2, 33)
    z1 = d.tensor((n, dim), normal=True) * scale
    z2 = z1 + noise * d.tensor((n, dim), normal=True)
    return case(z1, z2, **kwargs)


def drawn(d):
    return views(d, temperature=d.choice([0.1, 0.2, 0.5, 1.0, 0.07]))


def trusted(c):
    """The definition anchor by anchor, in float64 and plain loops."""
    z1, z2 = c.args
    t = c.kwargs.get("temperature", 0.5)
    z = torch.cat([z1, z2]).double()
    z = z / z.norm(dim=1, keepdim=True)
    n2 = z.shape[0]
    n = n2 // 2
    total = 0.0
    for i in range(n2):
        pos = (i + n) % n2
        sims = [float(z[i] @ z[j]) / t for j in range(n2) if j != i]
        top = max(sims)
        log_den = top + math.log(sum(math.exp(s - top) for s in sims))
        total += log_den - float(z[i] @ z[pos]) / t
    return torch.tensor(total / n2, dtype=torch.float64).to(z1.dtype)


def one_pair(d):
    return views(d, n=1, temperature=d.choice([0.1, 0.5]))


def cold(d):
    """Temperatures of 0.01 and 0.02: logits up to 100 overflow exp in float32."""
    return views(d, n=d.size(2, 12), temperature=d.choice([0.01, 0.02]))


def identical_views(d):
    c = views(d, n=d.size(2, 12))
    z1 = c.args[0]
    return case(z1, z1.clone(), temperature=0.3)


def loss_of(sol, z1, z2, t):
    out = sol.call("nt_xent", z1, z2, temperature=t)
    if not isinstance(out, torch.Tensor) or out.dim() != 0:
        fail("expected a 0-d tensor")
    return out


def scale_free(sol, c):
    """Only directions count: rescaling every embedding by a positive factor changes nothing."""
    z1, z2 = c.args
    t = c.kwargs["temperature"]
    factors = torch.linspace(0.1, 30.0, z1.shape[0], dtype=z1.dtype)[:, None]
    expect_close(loss_of(sol, z1 * factors, z2 * factors.flip(0), t), loss_of(sol, z1, z2, t),
                 "loss after rescaling the rows", scale=4)


def views_swap(sol, c):
    """The loss is symmetric in the two views."""
    z1, z2 = c.args
    t = c.kwargs["temperature"]
    expect_close(loss_of(sol, z2, z1, t), loss_of(sol, z1, z2, t), "loss with the views swapped",
                 scale=4)


def pairs_shuffle(sol, c):
    """Reordering the pairs (the same permutation for both views) changes nothing."""
    z1, z2 = c.args
    t = c.kwargs["temperature"]
    perm = torch.randperm(z1.shape[0], generator=torch.Generator().manual_seed(3))
    expect_close(loss_of(sol, z1[perm], z2[perm], t), loss_of(sol, z1, z2, t),
                 "loss with the pairs reordered", scale=4)


def lower_bound(sol, c):
    """Each anchor's positive is among its candidates: the loss is never negative."""
    z1, z2 = c.args
    out = loss_of(sol, z1, z2, c.kwargs["temperature"])
    if float(out) < -1e-6:
        fail(f"the loss came out negative ({float(out):.3g})")


def small(d):
    return views(d, n=d.size(1, 5), dim=d.size(2, 6), temperature=d.choice([0.2, 0.5, 1.0]))


def timing_case(d):
    """256 pairs of 64-dimensional embeddings."""
    c = views(d, n=256, dim=64)
    return case(*c.args, 0.1)


DECLARATIONS = [
    values("a small batch", "nt_xent", views, visible=True, expect=trusted,
           description="default temperature 0.5, against the definition anchor by anchor"),
    values("drawn temperatures", "nt_xent", drawn, visible=True, expect=trusted, cases=4),
    values("float32 and float64", "nt_xent", drawn, cases=4, dtypes=("float32", "float64"),
           expect=trusted),
    shapes("a 0-d tensor in the inputs' dtype", "nt_xent", drawn, dtypes=("float32", "float64")),
    gradients("gradients with respect to both views", "nt_xent", small, cases=3),
    edge("a single pair", "nt_xent", one_pair, expect=trusted, cases=2,
         description="N = 1: the positive is the only candidate, the loss is 0"),
    edge("a very low temperature", "nt_xent", cold, expect=trusted, cases=3,
         dtypes=("float32", "float64")),
    edge("identical views", "nt_xent", identical_views, expect=trusted, cases=2),
    edge("large embeddings", "nt_xent", lambda d: views(d, scale=500.0, noise=300.0,
                                                     temperature=0.2),
         expect=trusted, cases=2),
    prop("rescaling the embeddings changes nothing", scale_free, drawn, cases=3),
    prop("the two views play the same role", views_swap, drawn, cases=2),
    prop("the order of the pairs does not matter", pairs_shuffle, drawn, cases=2),
    prop("the loss is never negative", lower_bound, drawn, cases=2),
    nontrivial("the loss is not zero", "nt_xent", drawn),
    performance("time against the reference", "nt_xent", timing_case,
                description="256 pairs, 64 dimensions; graded: at most 3x the reference's "
                "time"),
]
