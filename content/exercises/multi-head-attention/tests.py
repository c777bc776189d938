import torch
from torch import nn

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def problem(d, *, cross=False, pad=False, causal=False, heads=None, high=9):
    """Inputs and injected weights. `heads`: a tuple to draw the head count from."""
    h = d.choice(heads or (1, 2, 3, 4))
    embed = h * d.size(1, 5)
    b, lq = d.size(1, 3), d.size(min(2 if heads else 1, high), high)
    lk = d.size(1, high) if cross else lq
    query = d.tensor((b, lq, embed))
    key = d.tensor((b, lk, embed)) if cross else query
    value = d.tensor((b, lk, embed)) if cross else query
    weights = (
        d.weights(embed, 3 * embed),
        d.tensor((3 * embed,), low=-0.5, high=0.5),
        d.weights(embed, embed),
        d.tensor((embed,), low=-0.5, high=0.5),
    )
    mask = None
    if pad:
        lengths = torch.tensor([d.integer(1, lk) for _ in range(b)])
        mask = torch.arange(lk)[None, :] >= lengths[:, None]
    return case(query, key, value, *weights, h, key_padding_mask=mask, causal=causal)


def torch_mha(c):
    """nn.MultiheadAttention with the same weights, in the grader's process."""
    query, key, value, w_in, b_in, w_out, b_out, heads = c.args
    embed = query.shape[-1]
    mha = nn.MultiheadAttention(embed, heads, batch_first=True, dtype=query.dtype)
    with torch.no_grad():
        mha.in_proj_weight.copy_(w_in)
        mha.in_proj_bias.copy_(b_in)
        mha.out_proj.weight.copy_(w_out)
        mha.out_proj.bias.copy_(b_out)
    mask = None
    if c.kwargs["causal"]:
        mask = torch.ones(query.shape[1], key.shape[1], dtype=torch.bool).triu(1)
    out, _ = mha(query, key, value, key_padding_mask=c.kwargs["key_padding_mask"],
                 attn_mask=mask, need_weights=False)
    return out.detach()


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def positions_permute(sol, c):
    """Self-attention without a causal mask: shuffling the positions shuffles the outputs."""
    x, _, _, *weights = c.args
    order = torch.randperm(x.shape[1])
    out = shaped(sol.call("multi_head_attention", x, x, x, *weights), x.shape, "output")
    shuffled = x[:, order]
    out_shuffled = sol.call("multi_head_attention", shuffled, shuffled, shuffled, *weights)
    expect_close(out_shuffled, out[:, order], "output for shuffled positions")


def batch_rows_independent(sol, c):
    """Each batch row's output depends on that row alone."""
    query, key, value, *rest = c.args
    whole = sol.call("multi_head_attention", query, key, value, *rest, **c.kwargs)
    whole = shaped(whole, query.shape, "output")
    mask = c.kwargs["key_padding_mask"]
    for i in range(query.shape[0]):
        kwargs = {**c.kwargs, "key_padding_mask": None if mask is None else mask[i : i + 1]}
        one = sol.call("multi_head_attention", query[i : i + 1], key[i : i + 1],
                       value[i : i + 1], *rest, **kwargs)
        one = shaped(one, (1, *query.shape[1:]), f"output for batch row {i} alone")
        expect_close(one[0], whole[i], f"batch row {i} computed alone")


def several_heads(d, **kw):
    return problem(d, heads=(2, 3, 4), **kw)


def timing_case(d):
    """Causal self-attention, batch 4, 16 positions, 32 features in 4 heads, for the
    performance test."""
    x = d.tensor((4, 16, 32))
    return case(x, x, x, d.weights(32, 96), d.tensor((96,), low=-0.5, high=0.5),
                d.weights(32, 32), d.tensor((32,), low=-0.5, high=0.5), 4, None, True)


DECLARATIONS = [
    values("self-attention equals nn.MultiheadAttention", "multi_head_attention", problem,
           expect=torch_mha, visible=True,
           description="query = key = value, weights injected into nn.MultiheadAttention"),
    values("several heads equal nn.MultiheadAttention", "multi_head_attention", several_heads,
           expect=torch_mha, cases=4),
    values("cross-attention equals nn.MultiheadAttention", "multi_head_attention",
           lambda d: several_heads(d, cross=True), expect=torch_mha, cases=3),
    values("padding mask equals nn.MultiheadAttention", "multi_head_attention",
           lambda d: several_heads(d, cross=True, pad=True), expect=torch_mha, cases=3),
    values("causal mask equals nn.MultiheadAttention", "multi_head_attention",
           lambda d: several_heads(d, causal=True, pad=True), expect=torch_mha, cases=3),
    values("float64 against the reference", "multi_head_attention",
           lambda d: several_heads(d, cross=True), dtypes=("float32", "float64")),
    shapes("output shape and dtype", "multi_head_attention", lambda d: problem(d, cross=True),
           dtypes=("float32", "float64")),
    gradients("gradients through every input and weight", "multi_head_attention",
              lambda d: problem(d, cross=True, high=4), cases=2),
    prop("shuffling positions shuffles the outputs", positions_permute, several_heads),
    prop("batch rows are independent", batch_rows_independent,
         lambda d: several_heads(d, pad=True, cross=True)),
    edge("one position, one head", "multi_head_attention",
         lambda d: problem(d, heads=(1,), high=1), expect=torch_mha, cases=1),
    nontrivial("the output is not zero", "multi_head_attention", several_heads),
    performance("time against the reference", "multi_head_attention", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("does not call the built-in attention", visible=True),
]
