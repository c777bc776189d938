import torch
import torch.nn.functional as F

from sandbox.grading import api_rule, case, edge, expect_close, fail, nontrivial, performance, prop
from sandbox.grading import shapes, values


def problem(d, *, strided=False, padded=False, tuples=False, high=9):
    """x, weight and a grad_out of the forward's output shape."""
    n, c, o = d.size(1, 3), d.size(1, 4), d.size(1, 5)
    kh, kw = d.size(1, 4), d.size(1, 4)
    ph, pw = (d.integer(0, 2), d.integer(0, 2)) if padded else (0, 0)
    sh, sw = (d.integer(1, 3), d.integer(1, 3)) if strided else (1, 1)
    h = max(d.size(1, high), kh - 2 * ph)
    w = max(d.size(1, high), kw - 2 * pw)
    h_out, w_out = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    kwargs = {}
    if strided:
        kwargs["stride"] = (sh, sw) if tuples or sh != sw else sh
    if padded:
        kwargs["padding"] = (ph, pw) if tuples or ph != pw else ph
    x = d.tensor((n, c, h, w))
    weight = d.weights(c * kh * kw, o).reshape(o, c, kh, kw)
    return case(x, weight, d.tensor((n, o, h_out, w_out), normal=True), **kwargs)


def everything(d, **kw):
    return problem(d, strided=True, padded=True, tuples=d.random.random() < 0.5, **kw)


def autograd_grads(c):
    """The same gradients from autograd through F.conv2d, in the grader's process."""
    x, weight, grad_out = (t.clone() for t in c.args)
    x.requires_grad_(True)
    weight.requires_grad_(True)
    bias = torch.zeros(weight.shape[0], dtype=x.dtype, requires_grad=True)
    F.conv2d(x, weight, bias, **c.kwargs).backward(grad_out)
    return x.grad, weight.grad, bias.grad


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def adjoint(sol, c):
    """The dot-product test: <conv(x, w), g> = <x, grad_input> = <w, grad_weight>, because
    the convolution is linear in x and in w separately."""
    x, weight, grad_out = c.args
    answer = sol.call("conv2d_backward", *c.args, **c.kwargs)
    if not isinstance(answer, (tuple, list)) or len(answer) != 3:
        fail("conv2d_backward must return (grad_input, grad_weight, grad_bias)")
    gx = shaped(answer[0], x.shape, "grad_input")
    gw = shaped(answer[1], weight.shape, "grad_weight")
    gb = shaped(answer[2], weight.shape[:1], "grad_bias")
    forward = (F.conv2d(x.double(), weight.double(), None, **c.kwargs) * grad_out.double()).sum()
    expect_close((x.double() * gx.double()).sum(), forward, "<x, grad_input>", scale=100)
    expect_close((weight.double() * gw.double()).sum(), forward, "<weight, grad_weight>",
                 scale=100)  # fmt: skip
    expect_close(gb.double(), grad_out.double().sum(dim=(0, 2, 3)), "grad_bias", scale=10)


def skipped_rows(d):
    """Stride 3 over a 2x2 kernel: some rows and columns are in no window at all."""
    n, c, o = d.size(1, 2), d.size(1, 3), d.size(1, 3)
    h, w = 3 * d.size(2, 4) + 2, 3 * d.size(2, 4) + 2
    x = d.tensor((n, c, h, w))
    weight = d.tensor((o, c, 2, 2))
    return case(x, weight, d.tensor((n, o, (h - 2) // 3 + 1, (w - 2) // 3 + 1)), stride=3)


def timing_case(d):
    """A 3x3 convolution over a (2, 4, 12, 12) batch, stride 1 and padding 1, for the
    performance test."""
    x = d.tensor((2, 4, 12, 12))
    weight = d.weights(4 * 3 * 3, 8).reshape(8, 4, 3, 3)
    return case(x, weight, d.tensor((2, 8, 12, 12), normal=True), 1, 1)


DECLARATIONS = [
    values("stride 1, no padding", "conv2d_backward", problem, expect=autograd_grads,
           visible=True, description="compared with autograd through F.conv2d"),
    values("strides and padding", "conv2d_backward", everything, expect=autograd_grads,
           visible=True),
    values("drawn strides and padding", "conv2d_backward", everything, expect=autograd_grads,
           cases=5),
    values("float64 against the reference", "conv2d_backward", everything, dtypes=("float64",)),
    shapes("gradient shapes and dtypes", "conv2d_backward", everything,
           dtypes=("float32", "float64")),
    prop("the dot-product test holds", adjoint, everything, cases=4),
    edge("pixels in no window get zero gradient", "conv2d_backward", skipped_rows,
         expect=autograd_grads, cases=2),
    edge("a kernel as large as the padded image", "conv2d_backward",
         lambda d: problem(d, padded=True, high=1), expect=autograd_grads, cases=2),
    nontrivial("the gradients are not zero", "conv2d_backward", everything),
    performance("time against the reference", "conv2d_backward", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("differentiates by hand", visible=True,
             description="no .backward(), torch.autograd or convolution functions"),
]
