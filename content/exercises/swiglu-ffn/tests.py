import torch
import torch.nn.functional as F

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def block(d, *, lead=None, d_model=None, hidden=None, scale=3.0):
    """x of shape (*lead, d_model) and the three weights in nn.Linear layout."""
    dm = d_model if d_model is not None else d.size(1, 12)
    h = hidden if hidden is not None else d.size(1, 20)
    lead = lead if lead is not None else d.shape((0, 3), high=6)
    x = d.tensor((*lead, dm), low=-scale, high=scale)
    return case(x, d.weights(dm, h), d.weights(dm, h), d.weights(h, dm))


def tokens(d):
    """A (tokens, d_model) batch, as a transformer block sees it after flattening."""
    return block(d, lead=(d.size(1, 9),))


def trusted(c):
    """The block written with torch's own SiLU and linear layers, in float64."""
    x, w_gate, w_up, w_down = (t.double() for t in c.args)
    out = F.linear(F.silu(F.linear(x, w_gate)) * F.linear(x, w_up), w_down)
    return out.to(c.args[0].dtype)


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def linear_in_up(sol, c):
    """The up branch enters linearly: scaling w_up by s scales the output by s."""
    x, w_gate, w_up, w_down = c.args
    base = shaped(sol.call("swiglu_ffn", x, w_gate, w_up, w_down), x.shape, "output")
    for s in (-2.0, 0.5):
        scaled = sol.call("swiglu_ffn", x, w_gate, s * w_up, w_down)
        expect_close(scaled, s * base, f"output with w_up scaled by {s}", scale=10)


def rows_independent(sol, c):
    """Each token is transformed on its own: a row's output does not depend on the others."""
    x = c.args[0]
    whole = shaped(sol.call("swiglu_ffn", *c.args), x.shape, "output")
    for i in sorted({0, x.shape[0] // 2, x.shape[0] - 1}):
        alone = sol.call("swiglu_ffn", x[i : i + 1], *c.args[1:])
        expect_close(alone, whole[i : i + 1], f"row {i} computed alone")


def gate_is_silu(sol, c):
    """With w_up = identity and w_down = identity, the block is silu(x w_gate^T) * x, and
    silu(g) = g * sigmoid(g) is checked here from its definition, in float64."""
    x, w_gate = c.args[0].double(), c.args[1].double()
    d_model = x.shape[-1]
    eye = torch.eye(d_model, dtype=torch.float64)
    square_gate = w_gate[:d_model] if w_gate.shape[0] >= d_model else torch.cat(
        [w_gate, torch.zeros(d_model - w_gate.shape[0], d_model, dtype=torch.float64)])
    out = sol.call("swiglu_ffn", x, square_gate, eye, eye)
    g = x @ square_gate.T
    expect_close(out, g / (1 + torch.exp(-g)) * x, "silu(x w_gate^T) * x")


def hidden_pairs(d):
    """Pairs (d_model, multiple_of): any d_model, and ones where floor(8 d / 3) already is a
    multiple (3 k m / 8 with m a multiple of 8), which must not be rounded up again."""
    pairs = []
    for _ in range(12):
        pairs.append((d.integer(1, 5000), d.choice([1, 2, 3, 7, 8, 32, 64, 100, 256])))
    for _ in range(6):
        m = d.choice([8, 16, 32, 64, 128, 256])
        pairs.append((3 * d.integer(1, 40) * m // 8, m))
    pairs += [(4096, 256), (d.choice([1, 2, 4, 5]), 1)]
    return case(data={"pairs": pairs})


def known_pairs(d):
    """Llama 7B's and a few small widths, one already a multiple."""
    return case(data={"pairs": [(4096, 256), (768, 64), (10, 8), (5, 1)]})


def hidden_sizes(sol, c):
    return [sol.call("swiglu_hidden_size", dm, m) for dm, m in c.data["pairs"]]


def trusted_sizes(c):
    """floor(8 d / 3) rounded up to a multiple of m, with math.ceil on exact fractions."""
    from fractions import Fraction
    from math import ceil, floor

    return [ceil(Fraction(floor(Fraction(8 * dm, 3)), m)) * m for dm, m in c.data["pairs"]]


def sizes_are_ints(sol, c):
    for dm, m in c.data["pairs"][:4]:
        got = sol.call("swiglu_hidden_size", dm, m)
        if not isinstance(got, int) or isinstance(got, bool):
            fail(f"swiglu_hidden_size({dm}, {m}) returned {type(got).__name__}, not an int")
        if got % m or got < 8 * dm // 3:
            fail(f"swiglu_hidden_size({dm}, {m}) = {got}: not a multiple of {m} at least "
                 "floor(8 d_model / 3)")


def timing_case(d):
    """64 tokens of width 128 through a hidden width of 344, for the performance test."""
    return block(d, lead=(64,), d_model=128, hidden=344)


DECLARATIONS = [
    values("a batch of tokens", "swiglu_ffn", tokens, expect=trusted, visible=True,
           description="x of shape (tokens, d_model); weights in nn.Linear layout"),
    values("any leading dims, float32 and float64", "swiglu_ffn", block, expect=trusted,
           cases=4, dtypes=("float32", "float64")),
    shapes("output shape and dtype", "swiglu_ffn", block, dtypes=("float32", "float64")),
    gradients("gradients through the block", "swiglu_ffn",
              lambda d: block(d, lead=(d.size(1, 5),), hidden=d.size(1, 9)), cases=3),
    values("the hidden width of known models", hidden_sizes, known_pairs,
           expect=trusted_sizes, visible=True, dtypes=("float64",), cases=1,
           description="swiglu_hidden_size(4096, 256) is 11008"),
    values("the hidden width on drawn sizes", hidden_sizes, hidden_pairs, expect=trusted_sizes,
           dtypes=("float64",), cases=3),
    prop("the hidden width is an int, a multiple, and at least 8 d / 3", sizes_are_ints,
         hidden_pairs, cases=2),
    edge("large pre-activations", "swiglu_ffn", lambda d: block(d, scale=300.0),
         expect=trusted, cases=3, dtypes=("float32", "float64"),
         description="gate values in the hundreds, both signs"),
    edge("no tokens", "swiglu_ffn", lambda d: block(d, lead=(0,)), expect=trusted, cases=1),
    edge("width one everywhere", "swiglu_ffn",
         lambda d: block(d, lead=(d.size(1, 5),), d_model=1, hidden=1), expect=trusted,
         cases=2),
    prop("the up branch is linear", linear_in_up, tokens, cases=3),
    prop("tokens are transformed independently", rows_independent, tokens, cases=3),
    prop("the gate is silu(g) = g * sigmoid(g)", gate_is_silu, tokens, cases=3),
    nontrivial("the output is not zero", "swiglu_ffn", tokens),
    performance("time against the reference", "swiglu_ffn", timing_case, calls=8,
                description="64 tokens, d_model 128, hidden 344; reported with its spread, "
                "not graded in this exercise"),
    api_rule("writes the gated activation itself", visible=True,
             description="no built-in SiLU or GLU"),
]
