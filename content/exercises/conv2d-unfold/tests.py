import torch
import torch.nn.functional as F

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def problem(d, *, strided=False, padded=False, bias=True, tuples=False, high=9):
    """An image batch and a kernel that fits the padded image."""
    n, c, o = d.size(1, 3), d.size(1, 4), d.size(1, 5)
    kh, kw = d.size(1, 4), d.size(1, 4)
    ph, pw = (d.integer(0, 2), d.integer(0, 2)) if padded else (0, 0)
    sh, sw = (d.integer(1, 3), d.integer(1, 3)) if strided else (1, 1)
    h = max(d.size(1, high), kh - 2 * ph)
    w = max(d.size(1, high), kw - 2 * pw)
    kwargs = {}
    if strided:
        kwargs["stride"] = (sh, sw) if tuples or sh != sw else sh
    if padded:
        kwargs["padding"] = (ph, pw) if tuples or ph != pw else ph
    b = d.tensor((o,), low=-1, high=1) if bias else None
    return case(d.tensor((n, c, h, w)), d.weights(c * kh * kw, o).reshape(o, c, kh, kw), b,
                **kwargs)  # fmt: skip


def everything(d, **kw):
    return problem(d, strided=True, padded=True, tuples=d.random.random() < 0.5, **kw)


def torch_conv(c):
    x, weight, bias = c.args
    return F.conv2d(x, weight, bias, **c.kwargs)


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def shift_equivariant(sol, c):
    """Stride 1, no padding: moving the image one row down moves the output one row down."""
    x, weight, bias = c.args
    if x.shape[2] <= weight.shape[2]:
        x = torch.cat([x, x], dim=2)
    out = sol.call("conv2d", x, weight, bias)
    out = shaped(out, F.conv2d(x, weight, bias).shape, "output")
    shifted = sol.call("conv2d", x[:, :, 1:], weight, bias)
    expect_close(shifted, out[:, :, 1:], "output of the image without its first row")


def linear_in_x(sol, c):
    x, weight, _ = c.args
    a = sol.call("conv2d", x, weight, None, **c.kwargs)
    b = sol.call("conv2d", 2.0 * x + 1.0, weight, None, **c.kwargs)
    ones = sol.call("conv2d", torch.ones_like(x), weight, None, **c.kwargs)
    want = F.conv2d(x, weight, None, **c.kwargs).shape
    a, b, ones = (shaped(t, want, "output") for t in (a, b, ones))
    expect_close(b, 2.0 * a + ones, "conv(2x + 1) against 2 conv(x) + conv(1)", scale=10)


def kernel_fills_image(d):
    n, c, o = d.size(1, 3), d.size(1, 3), d.size(1, 4)
    h, w = d.size(1, 5), d.size(1, 5)
    return case(d.tensor((n, c, h, w)), d.tensor((o, c, h, w)), d.tensor((o,)))


def timing_case(d):
    """A 3x3 convolution over a (2, 4, 16, 16) batch, stride 1 and padding 1, for the
    performance test."""
    weight = d.weights(4 * 3 * 3, 8).reshape(8, 4, 3, 3)
    return case(d.tensor((2, 4, 16, 16)), weight, d.tensor((8,), low=-1, high=1), 1, 1)


DECLARATIONS = [
    values("stride 1, no padding", "conv2d", problem, expect=torch_conv, visible=True,
           description="compared with F.conv2d on the same weights"),
    values("strides and padding", "conv2d", everything, expect=torch_conv, visible=True),
    values("drawn strides and padding", "conv2d", everything, expect=torch_conv, cases=5),
    values("without a bias", "conv2d", lambda d: everything(d, bias=False), expect=torch_conv),
    values("float64 against the reference", "conv2d", everything, dtypes=("float64",)),
    shapes("output shape and dtype", "conv2d", everything, dtypes=("float32", "float64")),
    gradients("gradients through the unfolded product", "conv2d",
              lambda d: everything(d, high=5), cases=2),
    prop("shifting the image shifts the output", shift_equivariant, problem),
    prop("the convolution is linear in x", linear_in_x, everything),
    edge("a kernel as large as the image", "conv2d", kernel_fills_image, expect=torch_conv,
         cases=2),
    edge("1x1 kernels with stride 2", "conv2d",
         lambda d: case(d.tensor((2, 3, d.size(1, 9), d.size(1, 9))), d.tensor((4, 3, 1, 1)),
                        None, stride=2),
         expect=torch_conv, cases=2),
    nontrivial("the output is not zero", "conv2d", everything),
    performance("time against the reference", "conv2d", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("does not call a built-in convolution", visible=True),
]
