import torch
import torch.nn.functional as F

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


def answer(value, what, shape=None, count=None):
    """The learner's answer, checked before a property computes with it: a tensor (of
    `shape`, when given) or a sequence of `count` values; anything else fails the check."""
    if count is not None:
        if not isinstance(value, (tuple, list)) or len(value) != count:
            fail(f"{what}: expected {count} values, got {type(value).__name__}")
        return value
    if not isinstance(value, torch.Tensor):
        fail(f"{what}: expected a tensor, got {type(value).__name__}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"{what}: expected shape {tuple(shape)}, got {tuple(value.shape)}")
    return value


def rows(d, lead=None, features=None, offset=0.0, spread=3.0):
    """x (*lead, D) with weight and bias (D,); eps drawn."""
    lead = lead if lead is not None else d.shape((1, 2), high=12)
    features = features if features is not None else d.size(1, 24)
    x = d.tensor((*lead, features), low=-spread, high=spread) + offset
    weight = d.tensor((features,), low=0.5, high=1.5) * d.choice([1.0, -1.0])
    bias = d.tensor((features,), low=-1, high=1)
    return case(x, weight, bias, eps=d.choice([1e-5, 1e-3]),
                data={"grad_y": d.tensor((*lead, features), normal=True)})


def small(d):
    """Small float64 problems for finite differences, at least two features."""
    return rows(d, lead=d.shape((1, 2), high=5), features=d.size(2, 7))


def far_from_zero(d):
    """Rows hundreds away from zero with a spread of about one: values alternate above and
    below the offset, so every row's spread is well above float32's resolution there."""
    c = rows(d, features=d.size(2, 24))
    x = c.args[0]
    signs = torch.ones(x.shape[-1], dtype=x.dtype)
    signs[1::2] = -1.0
    magnitudes = d.tensor(x.shape, low=0.5, high=1.0, dtype=torch.float64)
    offset = d.choice([300.0, -500.0])
    x = (offset + magnitudes * signs.double()).to(x.dtype)
    return case(x, *c.args[1:], **c.kwargs, data=c.data)


def default_eps(d):
    """Rows whose variance (about 3e-5) is close to eps, eps left out (its default is 1e-5)."""
    c = rows(d, features=d.size(4, 24), spread=0.01)
    return case(*c.args, data=c.data)


def torch_forward(c):
    x, weight, bias = c.args
    eps = c.kwargs.get("eps", 1e-5)
    out = F.layer_norm(x.double(), x.shape[-1:], weight.double(), bias.double(), eps)
    return out.to(x.dtype)


def grads_of(sol, c):
    _, grads = sol.vjp("layer_norm", c.args, c.data["grad_y"], c.kwargs)
    return grads


def torch_grads(c):
    x, weight, bias = (t.double().requires_grad_(True) for t in c.args)
    y = F.layer_norm(x, x.shape[-1:], weight, bias, c.kwargs["eps"])
    grads = torch.autograd.grad(y, (x, weight, bias), c.data["grad_y"].double())
    return [g.to(c.args[0].dtype) for g in grads]


def shift_invariant(sol, c):
    x, weight, bias = c.args
    shift = torch.linspace(-20, 20, x.shape[0], dtype=x.dtype).reshape(-1, *[1] * (x.dim() - 1))
    moved = sol.call("layer_norm", x + shift, weight, bias, **c.kwargs)
    expect_close(moved, sol.call("layer_norm", x, weight, bias, **c.kwargs),
                 "layer_norm(x + c) against layer_norm(x)", scale=10)


def grad_rows_sum_to_zero(sol, c):
    grad_x = answer(grads_of(sol, c)[0], "grad_x", c.args[0].shape)
    sums = grad_x.sum(dim=-1)
    expect_close(sums, torch.zeros_like(sums), "grad_x summed along the last dim", scale=100)


def timing_case(d):
    """A (8, 32, 64) batch, for the performance test (the forward only)."""
    c = rows(d, lead=(8, 32), features=64)
    return case(*c.args, 1e-5)


DECLARATIONS = [
    values("forward matches nn.LayerNorm", "layer_norm", rows, visible=True,
           expect=torch_forward, description="(N, D) and (B, T, D) inputs, drawn weight and bias"),
    values("forward in float64", "layer_norm", rows, dtypes=("float64",), expect=torch_forward),
    shapes("output and gradients keep their shapes", grads_of, rows,
           dtypes=("float32", "float64")),
    gradients("backward agrees with finite differences", "layer_norm", small, visible=True,
              description="gradcheck in float64 for x, weight and bias"),
    gradients("gradcheck on more shapes", "layer_norm",
              lambda d: rows(d, lead=d.shape(3, high=4), features=d.size(2, 9)), cases=3),
    values("gradients match PyTorch's LayerNorm", grads_of, rows, expect=torch_grads, cases=4),
    edge("a large mean against a small spread", "layer_norm", far_from_zero,
         expect=torch_forward, tol=30, cases=3),
    edge("a single feature", grads_of, lambda d: rows(d, features=1), expect=torch_grads,
         cases=2, description="x_hat is 0: y is the bias and grad_x is 0"),
    edge("rows with a tiny spread, eps left out", "layer_norm", default_eps,
         expect=torch_forward, cases=2),
    edge("an empty batch", grads_of, lambda d: rows(d, lead=(0,)), expect=torch_grads, cases=1),
    edge("one row without a batch dimension", grads_of, lambda d: rows(d, lead=()),
         expect=torch_grads, cases=2),
    prop("shifting a row changes nothing", shift_invariant, rows, cases=3),
    prop("each row of grad_x sums to zero", grad_rows_sum_to_zero,
         lambda d: rows(d, features=d.size(2, 24)), dtypes=("float64",)),
    nontrivial("the gradients are not zero", grads_of, rows),
    performance("time against the reference", "layer_norm", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes LayerNorm and its backward by hand", visible=True,
             description="no F.layer_norm, nn.LayerNorm, or autograd inside the backward"),
]
