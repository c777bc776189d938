import math

import torch

from sandbox.grading import (
    api_rule,
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


def problem(d, *, causal=False, hkv=None, group=None, high=9, t=None, low=-3.0, top=3.0):
    """q (B, Hkv*group, T, D) and k, v (B, Hkv, S, D) of drawn sizes; with `causal`, S >= T
    (the queries are the last T positions of the S keys)."""
    b, dim = d.size(1, 3), d.size(1, 16)
    hkv = d.size(1, 4) if hkv is None else hkv
    group = d.size(1, 4) if group is None else group
    t = d.size(1, high) if t is None else t
    s = t + (d.integer(0, 4) if d.case >= 1 else 0) if causal else d.size(1, high)
    q = d.tensor((b, hkv * group, t, dim), low=low, high=top)
    k = d.tensor((b, hkv, s, dim), low=low, high=top)
    v = d.tensor((b, hkv, s, dim), low=-3, high=3)
    # Without the mask the flag is left out: the default must be causal=False.
    return case(q, k, v, causal=True) if causal else case(q, k, v)


def decode(d):
    """One new query per sequence against a cache of S keys (T = 1), causal."""
    return problem(d, causal=True, t=1, high=1) if d.case == 0 else _long_cache(d)


def _long_cache(d):
    b, hkv, group, dim, s = d.size(1, 3), d.size(1, 4), d.size(2, 4), d.size(1, 16), d.size(2, 20)
    q = d.tensor((b, hkv * group, 1, dim))
    k, v = d.tensor((b, hkv, s, dim)), d.tensor((b, hkv, s, dim))
    return case(q, k, v, causal=True)


def trusted(q, k, v, causal):
    """Attention head by head in float64, with the softmax written out: query head h reads
    kv head h // (Hq // Hkv)."""
    q, k, v = q.double(), k.double(), v.double()
    b, hq, t, dim = q.shape
    hkv, s = k.shape[1], k.shape[2]
    out = torch.zeros(b, hq, t, v.shape[-1], dtype=torch.float64)
    for h in range(hq):
        g = h // (hq // hkv)
        scores = q[:, h] @ k[:, g].transpose(-2, -1) / math.sqrt(dim)
        for i in range(t):
            row = scores[:, i].clone()
            if causal:
                row[:, i + (s - t) + 1 :] = float("-inf")
            w = (row - row.amax(dim=-1, keepdim=True)).exp()
            w = w / w.sum(dim=-1, keepdim=True)
            out[:, h, i] = (w.unsqueeze(1) @ v[:, g]).squeeze(1)
    return out


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def out_of(sol, c):
    q, _, v = c.args
    want = (q.shape[0], q.shape[1], q.shape[2], v.shape[-1])
    return shaped(sol.call("grouped_query_attention", *c.args, **c.kwargs), want, "output")


def matches_head_by_head(sol, c):
    q, k, v = c.args
    expect = trusted(q, k, v, c.kwargs.get("causal", False)).to(q.dtype)
    expect_close(out_of(sol, c), expect, "output against attention computed head by head")


def kv_head_reaches_its_group_only(sol, c):
    q, k, v = c.args
    hq, hkv = q.shape[1], k.shape[1]
    group = hq // hkv
    before = out_of(sol, c)
    g = hkv - 1 if hkv > 1 else 0
    k2, v2 = k.clone(), v.clone()
    k2[:, g] = torch.randn(k2[:, g].shape, dtype=k.dtype) * 3
    v2[:, g] = v2[:, g] * -2 + 1
    after = out_of(sol, case(q, k2, v2, **c.kwargs))
    others = [h for h in range(hq) if h // group != g]
    if others:
        expect_close(
            after[:, others],
            before[:, others],
            f"query heads outside group {g} after changing kv head {g}",
        )
    mine = list(range(g * group, (g + 1) * group))
    if torch.allclose(after[:, mine], before[:, mine], atol=1e-3):
        fail(f"changing kv head {g} did not change query heads {mine[0]}..{mine[-1]}")


def future_does_not_leak(sol, c):
    q, k, v = c.args
    t, s = q.shape[2], k.shape[2]
    cut = t // 2  # queries 0..cut see keys 0..cut + (s - t) only
    before = out_of(sol, c)
    changed = [x.clone() for x in (q, k, v)]
    for x, start in zip(changed, (cut + 1, cut + 1 + s - t, cut + 1 + s - t), strict=True):
        x[:, :, start:] = torch.randn(x[:, :, start:].shape, dtype=x.dtype) * 5
    after = out_of(sol, case(*changed, **c.kwargs))
    expect_close(
        after[:, :, : cut + 1],
        before[:, :, : cut + 1],
        f"outputs of queries 0..{cut} after changing later positions",
    )


def timing_case(d):
    """Causal GQA for the performance test, with Llama 2 70B's heads: 64 query heads
    sharing 8 kv heads; 2 sequences, 16 queries against 16 keys, head size 16."""
    q = d.tensor((2, 64, 16, 16))
    k, v = d.tensor((2, 8, 16, 16)), d.tensor((2, 8, 16, 16))
    return case(q, k, v, True)


DECLARATIONS = [
    values(
        "grouped-query attention",
        "grouped_query_attention",
        problem,
        visible=True,
        description="Hq query heads sharing Hkv key-value heads, no mask",
    ),
    values(
        "causal grouped-query attention",
        "grouped_query_attention",
        lambda d: problem(d, causal=True),
        visible=True,
        description="query i sees keys j <= i + (S - T)",
    ),
    values(
        "float32 and float64, with and without the mask",
        "grouped_query_attention",
        lambda d: problem(d, causal=d.case % 2 == 1, high=13),
        cases=4,
        dtypes=("float32", "float64"),
    ),
    shapes(
        "output shape and dtype",
        "grouped_query_attention",
        lambda d: problem(d, causal=True),
        dtypes=("float32", "float64"),
    ),
    gradients(
        "gradients through q, k and v",
        "grouped_query_attention",
        lambda d: problem(d, causal=d.case != 1, high=5),
        cases=3,
    ),
    prop(
        "equals attention computed head by head in float64",
        matches_head_by_head,
        lambda d: problem(d, causal=d.case % 2 == 0, hkv=d.size(2, 4), group=d.size(2, 4)),
        cases=4,
    ),
    prop(
        "a kv head reaches only the query heads of its group",
        kv_head_reaches_its_group_only,
        lambda d: problem(d, causal=d.case % 2 == 1, hkv=d.size(2, 4), group=d.size(2, 4)),
        cases=4,
    ),
    prop(
        "changing later positions leaves earlier outputs alone",
        future_does_not_leak,
        lambda d: problem(d, causal=True, high=12, t=d.size(2, 12)),
        cases=4,
    ),
    edge(
        "Hkv == Hq is multi-head attention",
        "grouped_query_attention",
        lambda d: problem(d, causal=d.case == 1, group=1),
        cases=2,
    ),
    edge(
        "Hkv == 1 is multi-query attention",
        "grouped_query_attention",
        lambda d: problem(d, causal=d.case == 1, hkv=1, group=d.size(2, 6)),
        cases=2,
    ),
    edge("decoding: one query against a cache", "grouped_query_attention", decode, cases=3),
    # Scores up to about 250: float32's rounding of them, amplified by exp, is about a
    # tolerance, so the expected values are exact (float64) and the tolerance is five.
    edge(
        "large scores stay finite",
        "grouped_query_attention",
        lambda d: problem(d, causal=True, low=5.0, top=8.0),
        cases=2,
        dtypes=("float32", "float64"),
        exact=True,
        tol=5.0,
        description="scores above 88 overflow a naive exp in float32",
    ),
    nontrivial(
        "the output is not zero", "grouped_query_attention", lambda d: problem(d, causal=True)
    ),
    performance(
        "time against the reference",
        "grouped_query_attention",
        timing_case,
        description="graded: at most 3x the reference's time",
    ),
    api_rule(
        "shares the kv heads itself",
        visible=True,
        description="no fused scaled_dot_product_attention",
    ),
]
