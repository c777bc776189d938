import math

import torch

from sandbox.grading import api_rule, case, edge, fail, nontrivial, performance, prop, shapes
from sandbox.grading import values


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


def true_fans(shape):
    """The fans as torch.nn.init computes them, in the grader."""
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def generator(sol, seed):
    """A seeded torch.Generator built in the solution's process, on its device."""
    g = sol.new("torch.Generator", device=sol.device)
    sol.method_ref(g, "manual_seed", seed)
    return g


def any_shape(d):
    dims = d.integer(2, 5)
    shape = (d.size(1, 40), d.size(1, 40), *[d.size(1, 7) for _ in range(dims - 2)])
    return case(shape)


def big_weight(d):
    """A large weight whose fan_in and fan_out differ at least fourfold, linear or conv."""
    if d.choice(["linear", "conv"]) == "linear":
        small, large = d.choice([48, 64, 96]), d.choice([384, 512])
        shape = (small, large) if d.integer(0, 1) else (large, small)
    else:
        k = d.choice([3, 5])
        shape = (d.choice([64, 96]), d.choice([16, 24]), k, k)
        if d.integer(0, 1):
            shape = (shape[1], shape[0], k, k)
    return case(torch.empty(shape, dtype=d.dtype), data={"seed": d.integer(0, 2**31),
                                                        "gain": d.choice([1.0, 5 / 3, 0.5])})


def draw_kaiming(sol, c, seed=None):
    g = generator(sol, c.data["seed"] if seed is None else seed)
    return sol.call("kaiming_normal_", c.args[0], generator=g)


def draw_xavier(sol, c, seed=None):
    """A gain of None in the case's data leaves the argument out (its default is 1)."""
    g = generator(sol, c.data["seed"] if seed is None else seed)
    gain = {} if c.data["gain"] is None else {"gain": c.data["gain"]}
    return sol.call("xavier_uniform_", c.args[0], generator=g, **gain)


def check_mean_and_std(w, std, what):
    n = w.numel()
    w = w.double()
    if not bool(torch.isfinite(w).all()):
        fail(f"{what} produced values that are not finite")
    mean, got = float(w.mean()), float(w.std())
    if not abs(mean) <= 6 * std / math.sqrt(n):
        fail(f"{what}: the mean of {n} values is {mean:.3g}, too far from 0 for std {std:.4g}")
    if not abs(got / std - 1) <= 0.05:
        fail(f"{what}: the standard deviation of {n} values is {got:.4g}; expected "
             f"{std:.4g} (within 5%) for shape {tuple(w.shape)}")


def kaiming_statistics(sol, c):
    w = answer(draw_kaiming(sol, c), "kaiming_normal_", c.args[0].shape)
    fan_in, _ = true_fans(tuple(c.args[0].shape))
    std = math.sqrt(2.0 / fan_in)
    check_mean_and_std(w, std, "kaiming_normal_")
    # A normal variable lies within one standard deviation 68.3% of the time.
    inside = float((w.double().abs() < std).double().mean())
    if not abs(inside - 0.6827) <= 0.03:
        fail(f"kaiming_normal_: {inside:.1%} of the values lie within one standard deviation; "
             "a normal distribution puts 68.3% there")


def xavier_statistics(sol, c):
    w = answer(draw_xavier(sol, c), "xavier_uniform_", c.args[0].shape).double()
    if not bool(torch.isfinite(w).all()):
        fail("xavier_uniform_ produced values that are not finite")
    fan_in, fan_out = true_fans(tuple(c.args[0].shape))
    gain = 1.0 if c.data["gain"] is None else c.data["gain"]
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    top = float(w.abs().max())
    if top > bound * (1 + 1e-6):
        fail(f"xavier_uniform_: a value of magnitude {top:.4g} is beyond the bound {bound:.4g}")
    if top < 0.98 * bound:
        fail(f"xavier_uniform_: the largest of {w.numel()} values is {top:.4g}, far inside "
             f"the bound {bound:.4g}: the range is too narrow")
    check_mean_and_std(w, bound / math.sqrt(3.0), "xavier_uniform_")


def same_seed_same_weights(sol, c):
    for name, draw in (("kaiming_normal_", draw_kaiming), ("xavier_uniform_", draw_xavier)):
        first, again, other = (answer(draw(sol, c, seed=s), name) for s in (1234, 1234, 4321))
        if not torch.equal(first, again):
            fail(f"{name}: two generators seeded alike gave different weights: draw every "
                 "number from the generator you are given")
        if torch.equal(first, other):
            fail(f"{name}: generators with different seeds gave the same weights")


def fills_in_place(sol, c):
    for name, draw in (("kaiming_normal_", draw_kaiming), ("xavier_uniform_", draw_xavier)):
        kept = sol.keep(torch.zeros(c.args[0].shape, dtype=c.args[0].dtype))
        returned = answer(draw(sol, case(kept, data=c.data)), name)
        after = answer(sol.get(kept), name)
        if not torch.equal(after, returned):
            fail(f"{name} did not fill the tensor it was given in place (or returned another)")
        if not bool((after != 0).any()):
            fail(f"{name} left the weight at zero")


def fills_a_parameter(sol, c):
    """A layer's weight is an nn.Parameter, which requires grad: filling it in place must
    not be recorded by autograd (torch.nn.init works under no_grad)."""
    for name, draw in (("kaiming_normal_", draw_kaiming), ("xavier_uniform_", draw_xavier)):
        kept = sol.keep(torch.zeros(c.args[0].shape, dtype=c.args[0].dtype).requires_grad_())
        answer(draw(sol, case(kept, data=c.data)), name)
        if not bool((answer(sol.get(kept), name) != 0).any()):
            fail(f"{name} left the parameter at zero")


def default_gain(d):
    """A big weight with xavier_uniform_'s gain left out."""
    c = big_weight(d)
    return case(*c.args, data={**c.data, "gain": None})


def small_weight(d):
    shape = d.shape((2, 4), high=5)
    return case(torch.empty(shape, dtype=d.dtype), data={"seed": d.integer(0, 2**31),
                                                        "gain": 1.0})


def kaiming_spread(sol, c):
    """The spread of the drawn weights: their norm, compared with the reference's."""
    return draw_kaiming(sol, c)


def timing_case(d):
    """A (128, 128) weight to fill, for the performance test."""
    return case(torch.empty((128, 128), dtype=d.dtype))


DECLARATIONS = [
    values("fans of linear and convolution weights", "fans", any_shape, visible=True,
           cases=5, expect=lambda c: true_fans(c.args[0]),
           description="(out, in) and (out, in, *kernel) shapes"),
    edge("fans of 1x1 and single-tap kernels", "fans",
         lambda d: case((d.size(1, 9), d.size(1, 9), *[1] * d.integer(1, 3))),
         expect=lambda c: true_fans(c.args[0]), cases=3),
    prop("kaiming_normal_ has std sqrt(2 / fan_in) and is normal", kaiming_statistics,
         big_weight, cases=4, visible=True,
         description="mean, standard deviation and the share within one std, over 10k+ values"),
    prop("xavier_uniform_ fills [-a, a] evenly", xavier_statistics, big_weight, cases=4,
         visible=True, description="bound, mean and standard deviation with a drawn gain"),
    prop("xavier_uniform_ with the gain left out", xavier_statistics, default_gain, cases=2),
    prop("kaiming statistics in float64", kaiming_statistics, big_weight, cases=2,
         dtypes=("float64",)),
    prop("xavier statistics in float64", xavier_statistics, big_weight, cases=2,
         dtypes=("float64",)),
    prop("the same seed gives the same weights", same_seed_same_weights, small_weight, cases=2),
    prop("fills the weight in place", fills_in_place, small_weight, cases=2),
    prop("fills a weight that requires grad, as a layer's parameter does", fills_a_parameter,
         small_weight, cases=1),
    shapes("keeps shape and dtype", draw_kaiming, small_weight, dtypes=("float32", "float64")),
    nontrivial("the weights are not zero", kaiming_spread, big_weight),
    performance("time against the reference", "kaiming_normal_", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("does not call torch.nn.init", visible=True),
]
