import torch

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def problem(d, *, causal=False, pad=False, high=9, low=-3.0, top=3.0):
    """q, k, v of drawn sizes; with `pad`, each sequence keeps a drawn number of real keys
    at the front and the rest is padding (so every query still sees at least one key)."""
    b, lq, dim, dv = d.size(1, 4), d.size(1, high), d.size(1, 16), d.size(1, 8)
    lk = lq + (d.integer(0, 3) if d.case >= 2 else 0) if causal else d.size(1, high)
    q = d.tensor((b, lq, dim), low=low, high=top)
    k = d.tensor((b, lk, dim), low=low, high=top)
    v = d.tensor((b, lk, dv), low=-3, high=3)
    mask = None
    if pad:
        lengths = torch.tensor([d.integer(1, lk) for _ in range(b)])
        mask = torch.arange(lk)[None, :] >= lengths[:, None]
    return case(q, k, v, causal=causal, key_padding_mask=mask)


def left_padded(d):
    """Causal attention over left-padded sequences: the first queries see only padding."""
    b, length, dim = d.size(2, 4), d.size(3, 9), d.size(1, 8)
    pads = torch.tensor([d.integer(1, length - 1) for _ in range(b)])
    mask = torch.arange(length)[None, :] < pads[:, None]
    q, k, v = (d.tensor((b, length, dim)) for _ in range(3))
    return case(q, k, v, causal=True, key_padding_mask=mask)


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def out_of(sol, c):
    return sol.call("attention", *c.args, **c.kwargs)


def future_does_not_leak(sol, c):
    q, k, v = c.args
    # Query t sits at position t + offset when the queries are the last Lq of Lk positions.
    offset = k.shape[1] - q.shape[1]
    t = q.shape[1] // 2
    want = (q.shape[0], q.shape[1], v.shape[2])
    before = shaped(out_of(sol, c), want, "output")
    changed = [x.clone() for x in (q, k, v)]
    for x, start in zip(changed, (t + 1, t + 1 + offset, t + 1 + offset)):
        x[:, start:] = torch.randn(x[:, start:].shape, dtype=x.dtype) * 5
    after = shaped(out_of(sol, case(*changed, **c.kwargs)), want, "output")
    expect_close(after[:, : t + 1], before[:, : t + 1], f"outputs at positions 0..{t}")


def padding_is_ignored(sol, c):
    q, k, v = c.args
    mask = c.kwargs["key_padding_mask"]
    before = out_of(sol, c)
    k2, v2 = k.clone(), v.clone()
    k2[mask] = 40.0
    v2[mask] = -100.0
    after = out_of(sol, case(q, k2, v2, **c.kwargs))
    expect_close(after, before, "output after changing padded keys and values")


def keys_are_a_set(sol, c):
    q, k, v = c.args
    order = torch.randperm(k.shape[1])
    expect_close(out_of(sol, case(q, k[:, order], v[:, order])), out_of(sol, c),
                 "output with the keys and values shuffled together")


def timing_case(d):
    """Causal attention, batch 4, 32 positions, 32 features, for the performance test."""
    q, k, v = (d.tensor((4, 32, 32)) for _ in range(3))
    return case(q, k, v, True)


DECLARATIONS = [
    values("attention without masks", "attention", problem, visible=True,
           description="(batch, Lq, d) queries against (batch, Lk, d) keys"),
    values("causal attention", "attention", lambda d: problem(d, causal=True), visible=True,
           description="query i sees keys 0..i"),
    values("padding mask", "attention", lambda d: problem(d, pad=True), cases=4),
    values("causal with padding, float32 and float64", "attention",
           lambda d: problem(d, causal=True, pad=True), cases=4, dtypes=("float32", "float64")),
    shapes("output shape and dtype", "attention", lambda d: problem(d, pad=True),
           dtypes=("float32", "float64")),
    gradients("gradients through attention", "attention",
              lambda d: problem(d, causal=True, pad=True, high=5), cases=3),
    prop("changing future tokens leaves earlier outputs alone", future_does_not_leak,
         lambda d: problem(d, causal=True, high=12), cases=4),
    prop("padded keys and values change nothing", padding_is_ignored,
         lambda d: problem(d, pad=True), cases=4),
    prop("without a causal mask, the keys' order does not matter", keys_are_a_set, problem),
    # Scores near 170: float32's rounding of them, amplified by exp, is about a tolerance
    # (1.1 at most on seeds 0-4), so the expected values are exact and the tolerance is five.
    edge("large scores stay finite", "attention",
         lambda d: problem(d, causal=True, low=5.0, top=8.0), cases=2,
         dtypes=("float32", "float64"), exact=True, tol=5.0,
         description="scores above 88 overflow a naive exp"),
    edge("queries that see only padding give zeros", "attention", left_padded, cases=2),
    edge("sequences of length one", "attention",
         lambda d: problem(d, causal=True, pad=True, high=1), cases=1),
    nontrivial("the output is not zero", "attention", lambda d: problem(d, causal=True)),
    performance("time against the reference", "attention", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes the softmax and attention itself", visible=True,
             description="no F.scaled_dot_product_attention and no built-in softmax"),
]
