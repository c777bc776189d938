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


def rows(d, lead=None, features=None, low=-3.0, high=3.0):
    """x (*lead, D) and weight (D,); eps drawn."""
    lead = lead if lead is not None else d.shape((1, 2), high=12)
    features = features if features is not None else d.size(1, 24)
    x = d.tensor((*lead, features), low=low, high=high)
    weight = d.tensor((features,), low=0.5, high=1.5) * d.choice([1.0, -1.0])
    return case(x, weight, eps=d.choice([1e-6, 1e-5, 1e-3]),
                data={"grad_y": d.tensor((*lead, features), normal=True)})


def small(d):
    return rows(d, lead=d.shape((1, 2), high=5), features=d.size(1, 7))


def torch_forward(c):
    x, weight = c.args
    out = F.rms_norm(x.double(), x.shape[-1:], weight.double(), c.kwargs.get("eps", 1e-6))
    return out.to(x.dtype)


def grads_of(sol, c):
    _, grads = sol.vjp("rms_norm", c.args, c.data["grad_y"], c.kwargs)
    return grads


def torch_grads(c):
    x, weight = (t.double().requires_grad_(True) for t in c.args)
    y = F.rms_norm(x, x.shape[-1:], weight, c.kwargs.get("eps", 1e-6))
    grads = torch.autograd.grad(y, (x, weight), c.data["grad_y"].double())
    return [g.to(c.args[0].dtype) for g in grads]


def scale_invariant(sol, c):
    x, weight = c.args
    kwargs = {"eps": 1e-9}
    scaled = sol.call("rms_norm", 7.0 * x, weight, **kwargs)
    expect_close(scaled, sol.call("rms_norm", x, weight, **kwargs),
                 "rms_norm(7 x) against rms_norm(x)", scale=10)


def grad_orthogonal_to_x(sol, c):
    """Scaling a row leaves the output unchanged, so grad_x has no component along x."""
    x, weight = c.args
    c2 = type(c)(c.args, {"eps": 1e-12}, c.data)
    grad_x = answer(grads_of(sol, c2)[0], "grad_x", x.shape)
    along = (grad_x * x).sum(dim=-1)
    expect_close(along, torch.zeros_like(along), "sum(grad_x * x) along the last dim",
                 scale=1000)


def zero_rows(d):
    c = rows(d)
    x = c.args[0].clone()
    x[..., 0, :] = 0.0
    return case(x, c.args[1], **c.kwargs, data=c.data)


def default_eps(d):
    """Rows of magnitude about sqrt(1e-6), where eps is a large part of the mean square, with
    no eps passed: the statement's default applies."""
    c = rows(d, low=-2e-3, high=2e-3)
    return case(*c.args, data=c.data)


def timing_case(d):
    """A (8, 32, 64) batch, for the performance test (the forward only)."""
    c = rows(d, lead=(8, 32), features=64)
    return case(*c.args, 1e-6)


DECLARATIONS = [
    values("forward matches F.rms_norm", "rms_norm", rows, visible=True, expect=torch_forward,
           description="(N, D) and (B, T, D) inputs, drawn weight and eps"),
    values("forward in float64", "rms_norm", rows, dtypes=("float64",), expect=torch_forward),
    shapes("output and gradients keep their shapes", grads_of, rows,
           dtypes=("float32", "float64")),
    gradients("backward agrees with finite differences", "rms_norm", small, visible=True,
              description="gradcheck in float64 for x and weight"),
    gradients("gradcheck on more shapes", "rms_norm",
              lambda d: rows(d, lead=d.shape(3, high=4), features=d.size(1, 9)), cases=3),
    values("gradients match F.rms_norm's", grads_of, rows, expect=torch_grads, cases=4),
    edge("rows of zeros", grads_of, zero_rows, expect=torch_grads, cases=2,
         description="eps keeps a zero row finite: its output and gradients are zero"),
    edge("tiny and large rows", "rms_norm",
         lambda d: rows(d, low=d.choice([1e-3, 100.0]), high=d.choice([2e-3, 300.0])),
         expect=torch_forward, cases=2),
    edge("a single feature", grads_of, lambda d: rows(d, features=1), expect=torch_grads,
         cases=2),
    edge("an empty batch", grads_of, lambda d: rows(d, lead=(0,)), expect=torch_grads, cases=1),
    edge("one row without a batch dimension", grads_of, lambda d: rows(d, lead=()),
         expect=torch_grads, cases=2),
    edge("eps left at its default on small rows", "rms_norm", default_eps,
         expect=torch_forward, cases=2, description="rms_norm(x, weight) with no eps given"),
    edge("gradients with the default eps", grads_of, default_eps, expect=torch_grads,
         cases=2),
    prop("scaling a row changes nothing", scale_invariant, rows, cases=3),
    prop("grad_x is orthogonal to x", grad_orthogonal_to_x,
         lambda d: rows(d, features=d.size(2, 24)), dtypes=("float64",)),
    nontrivial("the gradients are not zero", grads_of, rows),
    performance("time against the reference", "rms_norm", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes RMSNorm and its backward by hand", visible=True,
             description="no F.rms_norm, nn.RMSNorm, or autograd inside the backward"),
]
