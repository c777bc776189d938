import torch

from sandbox.grading import (
    api_rule,
    case,
    edge,
    expect_close,
    gradients,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)


def activations(d):
    return case(d.tensor(d.shape((1, 3), high=24), low=-4, high=4))


def small(d):
    """Small float64 inputs for finite differences (d.dtype is float64 in gradient tests)."""
    return case(d.tensor(d.shape((1, 2), high=6), low=-3, high=3))


def with_grad_output(d):
    x = d.tensor(d.shape((1, 3), high=24), low=-4, high=4)
    return case(x, data={"grad_output": d.tensor(x.shape, normal=True)})


def far_out(d):
    return case(torch.tensor([-30.0, -20.0, -8.0, -1e-3, 0.0, 1e-3, 8.0, 20.0, 30.0],
                             dtype=d.dtype))


def empty(d):
    return case(d.tensor((0, d.size(1, 5))))


def grad_of_gelu(sol, c):
    """dL/dx for L = sum(grad_output * gelu(x))."""
    _, grads = sol.vjp("gelu", c.args, c.data["grad_output"])
    return grads[0]


def linear_in_grad_output(sol, c):
    (x,) = c.args
    g = c.data["grad_output"]
    _, (one,) = sol.vjp("gelu", (x,), g)
    _, (three,) = sol.vjp("gelu", (x,), 3.0 * g)
    expect_close(three, 3.0 * one, "gradient for 3 * grad_output", scale=10)


def bounded_below(sol, c):
    y = sol.call("gelu", *c.args)
    if bool((y < -0.1701).any()):
        raise AssertionError("gelu(x) went below its minimum of about -0.17")
    expect_close(torch.where(c.args[0] > 6, y, c.args[0]), c.args[0], "gelu(x) for large x",
                 scale=10)


def timing_case(d):
    """A (64, 256) tensor, for the performance test (the forward only)."""
    return case(d.tensor((64, 256), low=-4, high=4))


DECLARATIONS = [
    values("forward on small tensors", "gelu", activations, visible=True,
           description="gelu(x) = x * Phi(x) on float32 tensors of one to three dimensions"),
    shapes("same shape and dtype", "gelu", activations, dtypes=("float32", "float64")),
    values("forward in float32 and float64", "GELUFunction.apply", activations, cases=4,
           dtypes=("float32", "float64")),
    gradients("backward agrees with finite differences", "gelu", small, visible=True,
              description="gradcheck in float64: your backward against your forward"),
    gradients("gradcheck on more shapes", "GELUFunction.apply", small, cases=4),
    values("backward on a batch with a random grad_output", grad_of_gelu, with_grad_output,
           dtypes=("float32", "float64"), cases=3),
    edge("far from zero", "gelu", far_out, cases=1, dtypes=("float32", "float64")),
    edge("backward far from zero", grad_of_gelu,
         lambda d: case(*far_out(d).args, data={"grad_output": torch.ones(9, dtype=d.dtype)}),
         cases=1, dtypes=("float32", "float64")),
    edge("empty input", "gelu", empty, cases=1),
    prop("the backward is linear in grad_output", linear_in_grad_output, with_grad_output),
    prop("gelu is bounded below and tends to x", bounded_below, activations),
    nontrivial("backward is not zero", grad_of_gelu, with_grad_output),
    performance("time against the reference", "gelu", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes the backward by hand", visible=True,
             description="no F.gelu, nn.GELU, or autograd run inside the backward"),
]
