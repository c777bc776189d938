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


def problem(d, *, window=None, high=12, t=None, low=-3.0, top=3.0):
    """q, k, v of shape (B, H, T, D) and a window drawn among 1, 2, a middle value, T - 1,
    T and beyond T, unless given."""
    b, h, dim = d.size(1, 3), d.size(1, 4), d.size(1, 16)
    t = d.size(1, high) if t is None else t
    if window is None:
        window = d.choice([1, 2, max(1, t // 2), max(1, t - 1), t, t + d.integer(1, 5)])
        if d.case == 1:
            window = max(2, t // 3)
    q = d.tensor((b, h, t, dim), low=low, high=top)
    k = d.tensor((b, h, t, dim), low=low, high=top)
    v = d.tensor((b, h, t, dim), low=-3, high=3)
    return case(q, k, v, window)


def banded(d):
    """Long enough sequences for the window to matter: 2 <= window < T."""
    t = d.size(4, 16)
    return problem(d, t=t, window=d.integer(2, t - 1))


def trusted(q, k, v, window):
    """Query by query in float64, over its own slice of keys: max(0, i - window + 1)..i."""
    q, k, v = q.double(), k.double(), v.double()
    out = torch.empty_like(q)
    for i in range(q.shape[-2]):
        lo = max(0, i - window + 1)
        scores = (k[..., lo : i + 1, :] @ q[..., i, :, None])[..., 0] / math.sqrt(q.shape[-1])
        w = (scores - scores.amax(dim=-1, keepdim=True)).exp()
        w = w / w.sum(dim=-1, keepdim=True)
        out[..., i, :] = (w[..., None, :] @ v[..., lo : i + 1, :])[..., 0, :]
    return out


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def out_of(sol, c):
    q = c.args[0]
    return shaped(sol.call("sliding_window_attention", *c.args), q.shape, "output")


def matches_query_by_query(sol, c):
    q, k, v, window = c.args
    expect = trusted(q, k, v, window).to(q.dtype)
    expect_close(out_of(sol, c), expect, "output against each query attending its own window")


def window_of_one_copies_v(sol, c):
    q, k, v, _ = c.args
    expect_close(out_of(sol, case(q, k, v, 1)), v, "output with window 1 (each query sees itself)")


def outside_the_window_is_ignored(sol, c):
    q, k, v, window = c.args
    i = q.shape[-2] - 1  # the last query: keys 0 .. lo - 1 lie before its window
    lo = i - window + 1
    before = out_of(sol, c)
    k2, v2 = k.clone(), v.clone()
    k2[..., :lo, :] = torch.randn(k2[..., :lo, :].shape, dtype=k.dtype) * 5
    v2[..., :lo, :] = v2[..., :lo, :] * -3 + 1
    after = out_of(sol, case(q, k2, v2, window))
    expect_close(
        after[..., i, :],
        before[..., i, :],
        f"output of query {i} after changing the keys before its window",
    )
    if torch.allclose(after[..., lo - 1, :], before[..., lo - 1, :], atol=1e-3):
        fail(f"changing key {lo - 1} did not change the output of query {lo - 1}, which sees it")


def timing_case(d):
    """Window 16 over 64 positions, 2 sequences, 4 heads of size 16, for the performance
    test."""
    q, k, v = (d.tensor((2, 4, 64, 16)) for _ in range(3))
    return case(q, k, v, 16)


DECLARATIONS = [
    values(
        "windows of every size",
        "sliding_window_attention",
        problem,
        visible=True,
        description="(B, H, T, D) inputs; window 1, 2, up to T and beyond",
    ),
    values(
        "a window shorter than the sequence",
        "sliding_window_attention",
        banded,
        visible=True,
        description="query i sees keys i - window + 1 .. i",
    ),
    values(
        "float32 and float64",
        "sliding_window_attention",
        lambda d: problem(d, high=17),
        cases=4,
        dtypes=("float32", "float64"),
    ),
    shapes(
        "output shape and dtype", "sliding_window_attention", problem, dtypes=("float32", "float64")
    ),
    gradients(
        "gradients through q, k and v",
        "sliding_window_attention",
        lambda d: problem(d, high=6),
        cases=3,
    ),
    prop(
        "equals each query attending its own window in float64",
        matches_query_by_query,
        problem,
        cases=5,
    ),
    prop(
        "keys outside a query's window change nothing",
        outside_the_window_is_ignored,
        banded,
        cases=4,
    ),
    edge(
        "window 1: each query sees only itself",
        "sliding_window_attention",
        lambda d: problem(d, window=1),
        cases=2,
    ),
    prop("window 1 returns v", window_of_one_copies_v, problem, cases=2),
    edge(
        "window >= T is causal attention",
        "sliding_window_attention",
        lambda d: problem(d, window=d.integer(d.size(1, 12), 20), t=d.size(1, 12)),
        cases=2,
    ),
    edge(
        "a single position",
        "sliding_window_attention",
        lambda d: problem(d, t=1, window=d.integer(1, 3)),
        cases=2,
    ),
    # Scores up to about 250: float32's rounding of them, amplified by exp, is about a
    # tolerance, so the expected values are exact (float64) and the tolerance is five.
    edge(
        "large scores stay finite",
        "sliding_window_attention",
        lambda d: problem(d, low=5.0, top=8.0),
        cases=2,
        dtypes=("float32", "float64"),
        exact=True,
        tol=5.0,
        description="scores above 88 overflow a naive exp in float32",
    ),
    nontrivial("the output is not zero", "sliding_window_attention", banded),
    performance(
        "time against the reference",
        "sliding_window_attention",
        timing_case,
        description="graded: at most 3x the reference's time",
    ),
    api_rule(
        "builds the band and the attention itself",
        visible=True,
        description="no fused scaled_dot_product_attention",
    ),
]
