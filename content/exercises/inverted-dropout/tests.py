import math

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

# Rates far from 1/2, where "p is the keep probability" would still look right.
RATES = (0.1, 0.2, 0.3, 0.7, 0.8)


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


def generator(sol, seed):
    """A seeded torch.Generator built in the solution's process, on its device."""
    g = sol.new("torch.Generator", device=sol.device)
    sol.method_ref(g, "manual_seed", seed)
    return g


def activations(d, shape=None, p=None):
    """Values bounded away from zero, so a dropped element is told apart from a kept one."""
    shape = shape if shape is not None else d.shape((1, 3), high=24)
    x = d.tensor(shape, low=0.5, high=3.0) * torch.where(
        d.tensor(shape, low=-1, high=1) < 0, -1.0, 1.0
    ).to(d.dtype)
    return case(x, p if p is not None else d.choice(RATES), data={"seed": d.integer(0, 2**31)})


def many(d):
    return activations(d, shape=(d.choice([96, 128]), d.choice([160, 200])))


def train(sol, c, seed=None):
    x, p = c.args
    g = generator(sol, c.data["seed"] if seed is None else seed)
    return sol.call("dropout", x, p, training=True, generator=g)


def kept_are_rescaled(sol, c):
    x, p = c.args
    y = answer(train(sol, c), "dropout(x)", x.shape)
    dropped = y == 0
    expect_close(torch.where(dropped, x / (1 - p), y), x / (1 - p),
                 f"kept elements at p = {p} (expected x / (1 - p))", scale=10)


def drop_rate(sol, c):
    x, p = c.args
    y = answer(train(sol, c), "dropout(x)", x.shape)
    rate = float((y == 0).double().mean())
    if not abs(rate - p) <= 0.025:
        fail(f"at p = {p}, {rate:.1%} of {x.numel()} elements were zeroed; expected about "
             f"{p:.0%}")


def mean_is_kept(sol, c):
    x, p = c.args
    ones = torch.ones_like(x)
    y = answer(train(sol, case(ones, p, data=c.data)), "dropout(ones)", x.shape)
    mean = float(y.double().mean())
    spread = math.sqrt(p / (1 - p) / ones.numel())
    if not abs(mean - 1.0) <= 6 * spread:
        fail(f"at p = {p}, dropout of a tensor of ones has mean {mean:.4g}; its expected "
             "value is 1: kept elements are scaled by 1 / (1 - p)")


def same_seed_same_mask(sol, c):
    first, again, other = (answer(train(sol, c, s), "dropout(x)") for s in (77, 77, 78))
    if not torch.equal(first, again):
        fail("two generators seeded alike gave different masks: draw with the generator you "
             "are given")
    if torch.equal(first, other):
        fail("generators with different seeds gave the same mask")


def input_unchanged(sol, c):
    x, p = c.args
    kept = sol.keep(x.clone())
    g = generator(sol, c.data["seed"])
    sol.call("dropout", kept, p, training=True, generator=g)
    sol.call("dropout", kept, p, training=False)
    expect_close(sol.get(kept), x, "x after dropout(x)")


def default_mode(sol, c):
    """dropout(x, p) with training and generator left at their defaults."""
    x, p = c.args
    return sol.call("dropout", x, p)


def eval_mode(sol, c):
    x, p = c.args
    return sol.call("dropout", x, p, training=False)


def timing_case(d):
    """A (64, 256) tensor in training mode, for the performance test."""
    return case(d.tensor((64, 256)), 0.3, True)


DECLARATIONS = [
    values("eval mode is the identity", eval_mode, activations, visible=True,
           expect=lambda c: c.args[0], description="training=False returns x unchanged"),
    values("eval mode for any p and dtype", eval_mode,
           lambda d: activations(d, p=d.choice([0.0, 0.5, 0.9, 1.0])),
           expect=lambda c: c.args[0], dtypes=("float32", "float64")),
    prop("kept elements are scaled by 1 / (1 - p)", kept_are_rescaled, activations,
         visible=True, cases=4, dtypes=("float32", "float64")),
    prop("about a fraction p is zeroed", drop_rate, many, visible=True, cases=4,
         description="the share of zeros over about 20k elements"),
    prop("the expected value is unchanged", mean_is_kept, many, cases=4),
    prop("the same seed gives the same mask", same_seed_same_mask,
         lambda d: activations(d, shape=(d.size(8, 16), d.size(8, 16))), cases=2),
    prop("x itself is not modified", input_unchanged, activations, cases=2),
    shapes("keeps shape and dtype", train, activations, dtypes=("float32", "float64")),
    shapes("half precision keeps its dtype", train, activations, dtypes=("float16", "bfloat16"),
           visible=False),
    edge("p = 0 keeps everything", train, lambda d: activations(d, p=0.0),
         expect=lambda c: c.args[0], cases=2),
    edge("p = 1 drops everything", train, lambda d: activations(d, p=1.0),
         expect=lambda c: torch.zeros_like(c.args[0]), cases=2),
    edge("p = 1 with training left at its default", default_mode,
         lambda d: activations(d, p=1.0), expect=lambda c: torch.zeros_like(c.args[0]),
         cases=2),
    edge("an empty tensor", train, lambda d: activations(d, shape=(0, d.size(1, 5))),
         expect=lambda c: c.args[0], cases=1),
    nontrivial("training output is not zero", train, many),
    performance("time against the reference", "dropout", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("draws the mask itself", visible=True,
             description="no F.dropout, nn.Dropout or torch.bernoulli"),
]
