import math

import torch

from sandbox.grading import (
    api_rule,
    case,
    edge,
    expect_close,
    fail,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)


def problem(d, *, causal=False, t=None, s=None, high=13, blocks=None, low=-3.0, top=3.0):
    """q (B, H, T, D), k (B, H, S, D), v (B, H, S, Dv) of drawn sizes, and tile sizes that
    usually do not divide T and S (sometimes 1, sometimes larger than the sequence). With
    `causal`, S >= T. The flag is left out when False (its default)."""
    b, h, dim, dv = d.size(1, 3), d.size(1, 3), d.size(1, 16), d.size(1, 8)
    t = d.size(1, high) if t is None else t
    if s is None:
        s = t + (d.integer(0, 6) if d.case >= 1 else 0) if causal else d.size(1, high)
    if blocks is None:
        if d.case == 1:
            blocks = (max(1, t // 2 - 1) if t > 3 else 2, max(1, s // 3) if s > 4 else 3)
        else:
            blocks = (d.integer(1, t + 2), d.integer(1, s + 2))
    q = d.tensor((b, h, t, dim), low=low, high=top)
    k = d.tensor((b, h, s, dim), low=low, high=top)
    v = d.tensor((b, h, s, dv), low=-3, high=3)
    if causal:
        return case(q, k, v, *blocks, causal=True)
    return case(q, k, v, *blocks)


def trusted(q, k, v, causal):
    """Full attention in float64: every score at once, the softmax written out."""
    q, k, v = q.double(), k.double(), v.double()
    t, s = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        future = torch.ones(t, s, dtype=torch.bool).triu(s - t + 1)
        scores = scores.masked_fill(future, float("-inf"))
    top = scores.amax(dim=-1, keepdim=True)
    w = torch.exp(scores - top)
    total = w.sum(dim=-1, keepdim=True)
    return w @ v / total, (top + torch.log(total))[..., 0]


def pair(sol, c, where):
    q, _, v = c.args[:3]
    got = sol.call("flash_attention", *c.args, **c.kwargs)
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        fail(f"{where}: expected a pair (out, lse)")
    out, lse = got
    want_out = (*q.shape[:-1], v.shape[-1])
    for x, shape, name in ((out, want_out, "out"), (lse, q.shape[:-1], "lse")):
        if not isinstance(x, torch.Tensor) or tuple(x.shape) != tuple(shape):
            fail(f"{where}: expected {name} of shape {tuple(shape)}")
    return out, lse


def matches_full_attention(sol, c):
    q, k, v = c.args[:3]
    out, lse = pair(sol, c, "flash_attention")
    want_out, want_lse = trusted(q, k, v, c.kwargs.get("causal", False))
    expect_close(out, want_out.to(q.dtype), "out against full attention in float64")
    expect_close(lse, want_lse.to(q.dtype), "lse against full attention in float64")


def tiles_do_not_matter(sol, c):
    q, k, v, bq, bk = c.args
    out, lse = pair(sol, c, f"tiles ({bq}, {bk})")
    t, s = q.shape[-2], k.shape[-2]
    for other in ((1, 1), (t, s), (bk, bq), (t + 3, 2)):
        o2, l2 = pair(sol, case(q, k, v, *other, **c.kwargs), f"tiles {other}")
        expect_close(o2, out, f"out with tiles {other} against tiles ({bq}, {bk})")
        expect_close(l2, lse, f"lse with tiles {other} against tiles ({bq}, {bk})")


def future_does_not_leak(sol, c):
    q, k, v, bq, bk = c.args
    t, s = q.shape[-2], k.shape[-2]
    cut = t // 2  # queries 0..cut see keys 0..cut + (s - t) only
    out, lse = pair(sol, c, "flash_attention")
    k2, v2 = k.clone(), v.clone()
    start = cut + 1 + s - t
    k2[..., start:, :] = torch.randn(k2[..., start:, :].shape, dtype=k.dtype) * 5
    v2[..., start:, :] = -3 * v2[..., start:, :]
    o2, l2 = pair(sol, case(q, k2, v2, bq, bk, **c.kwargs), "flash_attention")
    expect_close(o2[..., : cut + 1, :], out[..., : cut + 1, :],
                 f"out of queries 0..{cut} after changing keys from {start} on")  # fmt: skip
    expect_close(l2[..., : cut + 1], lse[..., : cut + 1],
                 f"lse of queries 0..{cut} after changing keys from {start} on")  # fmt: skip


def timing_case(d):
    """Causal, 1 x 4 heads, 64 queries and keys of size 16, tiles of 16 by 16."""
    q, k, v = (d.tensor((1, 4, 64, 16)) for _ in range(3))
    return case(q, k, v, 16, 16, True)


DECLARATIONS = [
    values(
        "tiled attention",
        "flash_attention",
        problem,
        visible=True,
        description="out and lse; tiles that need not divide T or S",
    ),
    values(
        "causal tiled attention",
        "flash_attention",
        lambda d: problem(d, causal=True),
        visible=True,
        description="query i sees keys j <= i + (S - T)",
    ),
    values(
        "float32 and float64, with and without the mask",
        "flash_attention",
        lambda d: problem(d, causal=d.case % 2 == 0, high=19),
        cases=4,
        dtypes=("float32", "float64"),
    ),
    shapes(
        "shapes and dtypes of out and lse",
        "flash_attention",
        lambda d: problem(d, causal=True),
        dtypes=("float32", "float64"),
    ),
    prop(
        "equals full attention in float64",
        matches_full_attention,
        lambda d: problem(d, causal=d.case % 2 == 1, high=21),
        cases=6,
        dtypes=("float32", "float64"),
    ),
    prop(
        "the tile sizes do not change the result",
        tiles_do_not_matter,
        lambda d: problem(d, causal=d.case % 2 == 0),
        cases=4,
    ),
    prop(
        "later keys never reach earlier queries",
        future_does_not_leak,
        lambda d: problem(d, causal=True, t=d.size(2, 13)),
        cases=4,
    ),
    edge(
        "one query (decoding against a cache)",
        "flash_attention",
        lambda d: problem(d, causal=d.case != 1, t=1, s=d.size(1, 20)),
        cases=3,
    ),
    edge("one key", "flash_attention", lambda d: problem(d, s=1, t=d.size(1, 9)), cases=2),
    edge(
        "tiles of one",
        "flash_attention",
        lambda d: problem(d, causal=d.case == 1, blocks=(1, 1), high=9),
        cases=2,
    ),
    edge(
        "tiles larger than the sequence",
        "flash_attention",
        lambda d: problem(d, causal=d.case == 1, blocks=(d.integer(13, 20), d.integer(19, 30))),
        cases=2,
    ),  # fmt: skip
    edge(
        "causal with tiles that cross the diagonal",
        "flash_attention",
        lambda d: problem(
            d, causal=True, t=d.size(5, 16), blocks=(d.integer(2, 5), d.integer(2, 5))
        ),
        cases=3,
    ),  # fmt: skip
    # Scores up to about 250: float32's rounding of them, amplified by exp, is about a
    # tolerance, so the expected values are exact (float64) and the tolerance is five.
    edge(
        "large scores stay finite",
        "flash_attention",
        lambda d: problem(d, causal=d.case == 1, low=5.0, top=8.0),
        cases=2,
        dtypes=("float32", "float64"),
        exact=True,
        tol=5.0,
        description="scores above 88 overflow a naive exp in float32",
    ),  # fmt: skip
    nontrivial("the output is not zero", "flash_attention", lambda d: problem(d, causal=True)),
    performance(
        "time against the reference",
        "flash_attention",
        timing_case,
        description="reported with its spread; not graded in this exercise",
    ),
    api_rule(
        "keeps its own running softmax",
        visible=True,
        description="no built-in attention, softmax or logsumexp",
    ),
]
