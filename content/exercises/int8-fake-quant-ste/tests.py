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


def weight(d, channels=None):
    """A linear (C, K) or convolution (C, K, k, k) weight, channels of different ranges."""
    channels = channels if channels is not None else d.size(1, 16)
    rest = d.choice([(d.size(1, 24),), (d.size(1, 6), 3, 3)])
    ranges = d.tensor((channels, *[1] * len(rest)), low=0.05, high=4.0)
    return d.tensor((channels, *rest)) * ranges


def exact_ties(d):
    """Weights exactly halfway between two grid points (n + 1/2 times a power-of-two scale,
    so that w / s is exact in float32): the statement's torch.round sends them to the even
    neighbour, both signs, odd and even n."""
    channels, width = d.size(2, 8), d.size(4, 16)
    scale = 2.0 ** -torch.tensor([float(d.integer(2, 8)) for _ in range(channels)])
    n = d.integers((channels, width), -120, 120)
    n[:, :4] = torch.tensor([0, 1, -1, -2])  # 0.5, 1.5, -0.5, -1.5 in every channel
    w = ((n.to(torch.float64) + 0.5) * scale[:, None]).to(d.dtype)
    return case(w, scale.to(d.dtype))


def true_scale(w):
    amax = w.abs().flatten(1).amax(dim=1)
    return torch.where(amax > 0, amax / 127, torch.ones_like(amax))


def automatic(d):
    w = weight(d)
    return case(w, data={"grad_output": d.tensor(w.shape, normal=True)})


def too_small_scale(d):
    """A given scale 0.4 to 1.3 times the right one: some weights fall outside the grid."""
    w = weight(d)
    scale = true_scale(w) * d.tensor((w.shape[0],), low=0.4, high=1.3)
    return case(w, scale, data={"grad_output": d.tensor(w.shape, normal=True)})


def torch_fake_quant(c):
    """torch.fake_quantize_per_channel_affine in float32 (the only dtype it takes for the
    scale); the same formula written out for float64, where autograd's round has no STE."""
    w, scale = c.args
    if w.dtype == torch.float32:
        zero = torch.zeros(w.shape[0], dtype=torch.int32)
        return torch.fake_quantize_per_channel_affine(w, scale, zero, 0, -127, 127)
    s = scale.reshape(-1, *[1] * (w.dim() - 1))
    q = torch.round(w / s)
    clamped = torch.clamp(q, -127, 127) * s
    # Value of the clamped grid point, gradient of w where it was inside: the STE by hand.
    inside = ((q >= -127) & (q <= 127)).to(w.dtype)
    return clamped.detach() + (w - w.detach()) * inside


def grad_w(sol, c):
    _, grads = sol.vjp("fake_quant", c.args, c.data["grad_output"])
    return grads[0]


def torch_grad_w(c):
    w = c.args[0].clone().requires_grad_(True)
    (g,) = torch.autograd.grad(torch_fake_quant(case(w, c.args[1])), w, c.data["grad_output"])
    return g


def near_the_edges(d):
    """Weights at chosen multiples of their channel's scale, just inside and just outside
    the grid's ends, on both sides."""
    steps = torch.tensor([-300.0, -127.6, -127.4, -126.6, -0.4, 0.0, 0.6, 126.4, 127.4, 127.6,
                          131.0], dtype=torch.float64)
    channels = d.size(1, 6)
    scale = d.tensor((channels,), low=0.001, high=0.05, dtype=torch.float64)
    w = (steps[None, :] * scale[:, None]).to(d.dtype)
    return case(w, scale.to(d.dtype),
                data={"grad_output": d.tensor(w.shape, low=0.5, high=1.5)})


def on_the_grid(sol, c):
    """Every output is an integer multiple of its channel's scale, between -127 and 127."""
    w, scale = c.args
    y = answer(sol.call("fake_quant", w, scale), "fake_quant(w, scale)", w.shape)
    if not bool(torch.isfinite(y).all()):
        fail("fake_quant produced values that are not finite")
    levels = y.double() / scale.double().reshape(-1, *[1] * (w.dim() - 1))
    expect_close(levels, levels.round(), "output / scale (expected whole numbers)", scale=100)
    if float(levels.abs().max()) > 127 + 1e-3:
        fail(f"an output is {float(levels.abs().max()):.1f} steps from zero; int8 symmetric "
             "stops at 127")


def idempotent(sol, c):
    w, scale = c.args
    once = sol.call("fake_quant", w, scale)
    expect_close(sol.call("fake_quant", once, scale), once, "fake_quant(fake_quant(w))")


def zero_channel(d):
    w = weight(d, channels=d.size(2, 8))
    w[d.integer(0, w.shape[0] - 1)] = 0.0
    return case(w)


def scale_of(sol, c):
    return sol.call("per_channel_scale", c.args[0])


def timing_case(d):
    """A (64, 128) weight, scales computed per channel, for the performance test."""
    ranges = d.tensor((64, 1), low=0.05, high=4.0)
    return case(d.tensor((64, 128)) * ranges)


DECLARATIONS = [
    values("per-channel scales", scale_of, automatic, visible=True,
           expect=lambda c: true_scale(c.args[0]),
           description="max |w[c]| / 127 for each output channel"),
    values("fake_quant with a given scale matches PyTorch's", "fake_quant", too_small_scale,
           visible=True, expect=torch_fake_quant, cases=4, dtypes=("float32", "float64"),
           description="against torch.fake_quantize_per_channel_affine, range [-127, 127]"),
    values("fake_quant with its own scales", "fake_quant", automatic, cases=4,
           expect=lambda c: torch_fake_quant(case(c.args[0], true_scale(c.args[0])))),
    values("the straight-through gradient", grad_w, too_small_scale, visible=True,
           expect=torch_grad_w, cases=4,
           description="grad_output inside the grid, 0 where the value was clamped"),
    shapes("keeps shape and dtype", "fake_quant", automatic, dtypes=("float32", "float64")),
    edge("values near the ends of the grid", "fake_quant", near_the_edges, cases=3,
         expect=torch_fake_quant, dtypes=("float32", "float64")),
    edge("gradients near the ends of the grid", grad_w, near_the_edges, cases=3,
         expect=torch_grad_w, dtypes=("float32", "float64")),
    edge("weights exactly halfway between grid points", "fake_quant", exact_ties, cases=2,
         expect=torch_fake_quant, dtypes=("float32", "float64")),
    edge("a channel of zeros", "fake_quant", zero_channel, cases=2,
         expect=lambda c: torch.zeros_like(c.args[0]) + torch_fake_quant(
             case(c.args[0], true_scale(c.args[0])))),
    prop("outputs lie on the int8 grid", on_the_grid, too_small_scale, cases=3),
    prop("quantising twice changes nothing", idempotent, too_small_scale, cases=3),
    nontrivial("the gradient is not zero", grad_w, automatic),
    performance("time against the reference", "fake_quant", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("quantises by hand", visible=True,
             description="no torch.fake_quantize_*, torch.quantize_* or torch.ao"),
]
