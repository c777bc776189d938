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


def rows(d):
    """A batch of rows, softmax over the last dimension."""
    return case(d.tensor(d.shape(2, high=40), low=-5, high=5), dim=-1)


def any_dim(d):
    """Two to four dimensions, softmax over any of them, counted from either end."""
    shape = d.shape((2, 4), high=9)
    dim = d.integer(0, len(shape) - 1)
    if d.random.random() < 0.5:
        dim -= len(shape)
    return case(d.tensor(shape, low=-8, high=8), dim=dim)


def huge(d):
    """Logits in the thousands, of both signs."""
    return case(d.tensor(d.shape(2, high=20), low=-3000, high=3000), dim=-1)


def rows_far_apart(d):
    """Each row in a band of its own, hundreds apart from the others'."""
    n, k = d.size(2, 8), d.size(1, 12)
    offsets = torch.linspace(-600, 600, n, dtype=torch.float64).to(d.dtype)[:, None]
    return case(d.tensor((n, k), low=-2, high=2) + offsets, dim=1)


def empty(d):
    return case(d.tensor((0, d.size(1, 7))), dim=-1)


def empty_along_dim(d):
    """A dimension of size 0, the reduced one in the first case, another one after."""
    k = d.size(1, 7)
    if d.case % 2 == 0:
        return case(d.tensor((k, 0)), dim=d.choice([-1, 1]))
    return case(d.tensor((0, k)), dim=-1)


def one_column(d):
    return case(d.tensor((d.size(1, 9), 1), low=-50, high=50), dim=-1)


def softmax_of(sol, c):
    return sol.call("softmax", *c.args, **c.kwargs)


def log_softmax_of(sol, c):
    return sol.call("log_softmax", *c.args, **c.kwargs)


def sums_to_one(sol, c):
    p = softmax_of(sol, c)
    dim = c.kwargs["dim"]
    if bool((p < 0).any()):
        fail("softmax gave a negative probability")
    expect_close(p.sum(dim=dim), torch.ones_like(p.sum(dim=dim)), "sum along dim", scale=10)


def shift_invariant(sol, c):
    (x,) = c.args
    dim = c.kwargs["dim"]
    shift = torch.linspace(-40, 40, x.shape[0], dtype=x.dtype).reshape(-1, *[1] * (x.dim() - 1))
    if dim % x.dim() == 0:
        shift = torch.full_like(x, 17.0)
    expect_close(softmax_of(sol, case(x + shift, dim=dim)), softmax_of(sol, c), "softmax(x + c)",
                 scale=10)


def exp_of_log_softmax_is_softmax(sol, c):
    expect_close(log_softmax_of(sol, c).exp(), softmax_of(sol, c), "exp(log_softmax(x))",
                 scale=10)


DECLARATIONS = [
    values("softmax of small rows", "softmax", rows, visible=True,
           description="softmax over the last dimension of a (batch, classes) tensor"),
    values("log_softmax of small rows", "log_softmax", rows, visible=True,
           description="log-softmax over the last dimension"),
    shapes("same shape and dtype as the input", "softmax", any_dim, dtypes=("float32", "float64"),
           description="the output keeps the input's shape and dtype"),
    values("softmax along any dim", "softmax", any_dim, cases=4, dtypes=("float32", "float64")),
    values("log_softmax along any dim", "log_softmax", any_dim, cases=4,
           dtypes=("float32", "float64")),
    edge("softmax of huge logits", "softmax", huge, visible=True,
         description="logits of a few thousand, positive and negative, stay finite"),
    edge("log_softmax of huge logits", "log_softmax", huge, dtypes=("float32", "float64")),
    edge("rows hundreds apart", "softmax", rows_far_apart),
    edge("log_softmax of rows hundreds apart", "log_softmax", rows_far_apart),
    edge("empty batch", "softmax", empty, cases=1),
    edge("empty along the softmax dimension", "softmax", empty_along_dim, cases=2),
    edge("log_softmax of an empty tensor", "log_softmax", empty_along_dim, cases=2),
    edge("a single class", "log_softmax", one_column, cases=2),
    edge("softmax of a single class", "softmax", one_column, cases=2),
    prop("probabilities are non-negative and sum to one", sums_to_one, any_dim, cases=4),
    prop("adding a constant to every logit changes nothing", shift_invariant, rows),
    prop("exp(log_softmax) equals softmax", exp_of_log_softmax_is_softmax, any_dim),
    nontrivial("softmax is not a constant", "softmax", rows),
    performance("time against the reference", "softmax",
                lambda d: case(d.tensor((64, 256)), dim=-1),
                description="reported with its spread; not graded in this exercise"),
    api_rule("computes softmax itself", visible=True,
             description="no torch.softmax, F.softmax, logsumexp or their log versions"),
]
