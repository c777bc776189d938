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


def problem(d, lead=None, fan_in=None, fan_out=None, with_bias=True):
    """x, weight, bias and grad_out of matching shapes; `lead` is the leading batch shape."""
    fan_in = fan_in if fan_in is not None else d.size(1, 24)
    fan_out = fan_out if fan_out is not None else d.size(1, 24)
    lead = lead if lead is not None else (d.size(1, 20),)
    x = d.tensor((*lead, fan_in))
    weight = d.weights(fan_in, fan_out)
    bias = d.tensor((fan_out,), low=-0.5, high=0.5) if with_bias else None
    grad_out = d.tensor((*lead, fan_out), normal=True)
    return case(x, weight, bias, grad_out)


def batched(d):
    return problem(d, lead=d.shape((2, 3), high=6))


def square(d):
    n = d.size(2, 12)
    return problem(d, fan_in=n, fan_out=n)


def no_bias(d):
    return problem(d, with_bias=False)


def empty_batch(d):
    return problem(d, lead=(0,))


def single_row(d):
    return problem(d, lead=(1,), fan_in=d.size(1, 9), fan_out=1)


def one_sample(d):
    """No batch dimension at all: x is (in_features,)."""
    return problem(d, lead=())


def autograd_grads(c):
    """The expected gradients, from torch's own nn.Linear backward in the grader."""
    x, weight, bias, grad_out = (t.clone() if t is not None else None for t in c.args)
    leaves = [t.requires_grad_(True) for t in (x, weight, bias) if t is not None]
    y = torch.nn.functional.linear(x, weight, bias)
    grads = torch.autograd.grad(y, leaves, grad_out)
    return (grads[0], grads[1], grads[2] if bias is not None else None)


def sums_over_the_batch(sol, c):
    """The weight and bias gradients of a batch are the sums of its halves' gradients."""
    x, weight, bias, grad_out = c.args
    cut = x.shape[0] // 2
    _, gw, gb = answer(sol.call("linear_backward", x, weight, bias, grad_out), "answer", count=3)
    _, gw1, gb1 = answer(sol.call("linear_backward", x[:cut], weight, bias, grad_out[:cut]),
                         "answer for the first half", count=3)
    _, gw2, gb2 = answer(sol.call("linear_backward", x[cut:], weight, bias, grad_out[cut:]),
                         "answer for the second half", count=3)
    gw1, gw2 = answer(gw1, "grad_weight", weight.shape), answer(gw2, "grad_weight", weight.shape)
    gb1, gb2 = answer(gb1, "grad_bias", bias.shape), answer(gb2, "grad_bias", bias.shape)
    expect_close(gw, gw1 + gw2, "grad_weight of the batch against its halves'", scale=10)
    expect_close(gb, gb1 + gb2, "grad_bias of the batch against its halves'", scale=10)


def linear_in_grad_out(sol, c):
    x, weight, bias, grad_out = c.args
    one = answer(sol.call("linear_backward", x, weight, bias, grad_out), "answer", count=3)
    three = answer(sol.call("linear_backward", x, weight, bias, 3.0 * grad_out), "answer",
                   count=3)
    for name, a, b, like in zip(("grad_x", "grad_weight", "grad_bias"), one, three,
                                (x, weight, bias), strict=True):
        expect_close(b, 3.0 * answer(a, name, like.shape), f"{name} for 3 * grad_out",
                     scale=10)


def timing_case(d):
    """64 rows through a 128 -> 64 layer, for the performance test."""
    return problem(d, lead=(64,), fan_in=128, fan_out=64)


DECLARATIONS = [
    values("a batch of rows", "linear_backward", problem, visible=True, expect=autograd_grads,
           description="x (N, in), against nn.Linear's own backward"),
    shapes("gradients are shaped like their inputs", "linear_backward", batched,
           dtypes=("float32", "float64")),
    values("leading batch dimensions", "linear_backward", batched, cases=4,
           dtypes=("float32", "float64"), expect=autograd_grads),
    values("square weights", "linear_backward", square, expect=autograd_grads, cases=2),
    values("without a bias", "linear_backward", no_bias, cases=2, expect=autograd_grads,
           visible=True, description="bias=None gives grad_bias=None"),
    values("leading dimensions without a bias", "linear_backward",
           lambda d: problem(d, lead=d.shape((1, 3), high=6), with_bias=False), cases=2,
           expect=autograd_grads),
    edge("an empty batch", "linear_backward", empty_batch, cases=1, expect=autograd_grads),
    edge("one row, one output", "linear_backward", single_row, cases=2, expect=autograd_grads),
    edge("a single sample without batch dimension", "linear_backward", one_sample, cases=2,
         expect=autograd_grads),
    prop("the batch's gradients are the sum of its halves'", sums_over_the_batch,
         lambda d: problem(d, lead=(d.size(2, 20),))),
    prop("the gradients are linear in grad_out", linear_in_grad_out, problem),
    nontrivial("the gradients are not zero", "linear_backward", problem),
    performance("time against the reference", "linear_backward", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("computes the gradients without autograd", visible=True,
             description="no .backward(), torch.autograd or torch.func"),
]
