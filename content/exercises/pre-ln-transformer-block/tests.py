import torch
from torch import nn

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values

NAMES = (
    "norm1.weight", "norm1.bias", "self_attn.in_proj_weight", "self_attn.in_proj_bias",
    "self_attn.out_proj.weight", "self_attn.out_proj.bias", "norm2.weight", "norm2.bias",
    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
)  # fmt: skip


def drawn_params(d, model, d_ff):
    """Every weight drawn here, norms included (not their ones and zeros)."""
    return {
        "norm1.weight": d.tensor((model,), low=0.5, high=1.5),
        "norm1.bias": d.tensor((model,), low=-0.5, high=0.5),
        "self_attn.in_proj_weight": d.weights(model, 3 * model),
        "self_attn.in_proj_bias": d.tensor((3 * model,), low=-0.3, high=0.3),
        "self_attn.out_proj.weight": d.weights(model, model),
        "self_attn.out_proj.bias": d.tensor((model,), low=-0.3, high=0.3),
        "norm2.weight": d.tensor((model,), low=0.5, high=1.5),
        "norm2.bias": d.tensor((model,), low=-0.5, high=0.5),
        "linear1.weight": d.weights(model, d_ff),
        "linear1.bias": d.tensor((d_ff,), low=-0.3, high=0.3),
        "linear2.weight": d.weights(d_ff, model),
        "linear2.bias": d.tensor((model,), low=-0.3, high=0.3),
    }


def problem(d, *, causal=False, high=8, heads=(1, 2, 3, 4)):
    h = d.choice(heads)
    model, d_ff = h * d.size(1, 4), d.size(1, 24)
    x = d.tensor((d.size(1, 3), d.size(1, high), model))
    return case(x, drawn_params(d, model, d_ff), h, causal=causal)


def sizes(d):
    model = d.choice((4, 6, 8, 12, 16, 24, 64))
    heads = d.choice([h for h in (1, 2, 3, 4, 8) if model % h == 0])
    return case(model, heads, d.choice((1, 7, 32, 4 * model)))


def torch_block(c):
    """nn.TransformerEncoderLayer with the same weights, in the grader's process (training
    mode with dropout 0, so it takes the plain path)."""
    x, params, heads = c.args
    model, d_ff = x.shape[-1], params["linear1.weight"].shape[0]
    layer = nn.TransformerEncoderLayer(model, heads, d_ff, dropout=0.0, activation="gelu",
                                       batch_first=True, norm_first=True, dtype=x.dtype)
    layer.load_state_dict(params)
    mask = None
    if c.kwargs["causal"]:
        mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1)
    return layer(x, src_mask=mask).detach()


def torch_count(c):
    model, heads, d_ff = c.args
    layer = nn.TransformerEncoderLayer(model, heads, d_ff)
    return sum(p.numel() for p in layer.parameters() if p.requires_grad)


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def count_ignores_heads(sol, c):
    model, _, d_ff = c.args
    counts = {h: sol.call("block_parameter_count", model, h, d_ff) for h in (1, 2, 4)}
    if not all(isinstance(n, int) for n in counts.values()):
        fail("block_parameter_count must return an int")
    if len(set(counts.values())) != 1:
        fail(f"the count changes with the number of heads: {counts}")


def silent_sublayers_are_identity(sol, c):
    """With the attention and feed-forward outputs projected to zero, a pre-LN block passes
    its input through unchanged: the residual stream is never normalised."""
    x, params, heads = c.args
    silent = dict(params)
    for name in ("self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear2.weight",
                 "linear2.bias"):  # fmt: skip
        silent[name] = torch.zeros_like(params[name])
    expect_close(sol.call("pre_ln_block", x, silent, heads), x, "output with silent sublayers")


def positions_permute(sol, c):
    x, params, heads = c.args
    order = torch.randperm(x.shape[1])
    out = shaped(sol.call("pre_ln_block", x, params, heads), x.shape, "output")
    expect_close(sol.call("pre_ln_block", x[:, order], params, heads), out[:, order],
                 "output for shuffled positions")


def timing_case(d):
    """Batch 2, 16 positions, 32 features in 4 heads, d_ff 64, for the performance test."""
    return case(d.tensor((2, 16, 32)), drawn_params(d, 32, 64), 4, True)


DECLARATIONS = [
    values("parameter count equals nn.TransformerEncoderLayer's", "block_parameter_count",
           sizes, expect=torch_count, tol=0.0, cases=5, visible=True,
           description="counted exactly, for several widths, head counts and d_ff"),
    values("parameter count for more sizes", "block_parameter_count", sizes,
           expect=torch_count, tol=0.0, cases=6),
    prop("the count does not depend on the number of heads", count_ignores_heads, sizes),
    values("block equals nn.TransformerEncoderLayer(norm_first=True)", "pre_ln_block", problem,
           expect=torch_block, visible=True, description="weights injected by state_dict names"),
    values("causal block equals nn.TransformerEncoderLayer", "pre_ln_block",
           lambda d: problem(d, causal=True, heads=(2, 3, 4)), expect=torch_block, cases=3),
    values("float64 against the reference", "pre_ln_block",
           lambda d: problem(d, causal=True, heads=(2, 3)), dtypes=("float32", "float64")),
    shapes("output shape and dtype", "pre_ln_block", problem, dtypes=("float32", "float64")),
    gradients("gradients through the block", "pre_ln_block",
              lambda d: problem(d, causal=True, high=4), cases=2),
    prop("with silent sublayers the block is the identity", silent_sublayers_are_identity,
         problem),
    prop("shuffling positions shuffles the outputs", positions_permute,
         lambda d: problem(d, heads=(2, 3))),
    edge("a single token", "pre_ln_block", lambda d: problem(d, high=1), expect=torch_block,
         cases=1),
    nontrivial("the output is not zero", "pre_ln_block", problem),
    performance("time against the reference", "pre_ln_block", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("builds the block itself", visible=True,
             description="no nn.TransformerEncoderLayer or nn.MultiheadAttention"),
]
