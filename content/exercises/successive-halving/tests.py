import math

import torch

from sandbox.grading import case, edge, expect_close, fail, gradients, nontrivial, performance
from sandbox.grading import prop, shapes, values


def grid(d, *, configs=None, rungs=None, eta=None, levels=None, nans=0):
    """Learning curves: each config's loss falls with the budget. `levels` rounds the losses to
    a coarse grid so that ties happen; `nans` configs diverge (NaN from a drawn rung on)."""
    n = configs if configs is not None else d.size(1, 40)
    k = rungs if rungs is not None else d.size(1, 6)
    start = d.tensor((n, 1), low=0.5, high=3.0, dtype=torch.float64)
    rate = d.tensor((n, 1), low=0.0, high=0.6, dtype=torch.float64)
    noise = d.tensor((n, k), low=-0.1, high=0.1, dtype=torch.float64)
    losses = start * torch.exp(-rate * torch.arange(k, dtype=torch.float64)) + noise
    if levels is not None:
        losses = torch.round(losses * levels) / levels
    for _ in range(nans):
        losses[d.integer(0, n - 1), d.integer(0, k - 1):] = math.nan
    return case(losses.to(d.dtype), eta if eta is not None else d.choice([2, 3, 4]))


def heavy_ties(d):
    """Only three distinct losses: most rankings are decided by the tie rule."""
    n, k = d.size(16, 64), d.size(3, 5)
    return case(d.integers((n, k), 0, 3).to(torch.float64) / 2, 2)


def checked(result):
    """The result must be (list of lists of ints, int)."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        fail(f"expected a pair (rungs, winner), got {type(result).__name__}")
    rungs, winner = result
    if not isinstance(rungs, list) or not all(isinstance(r, list) for r in rungs):
        fail("rungs must be a list of lists")
    for r in rungs:
        for c in r:
            if not isinstance(c, int) or isinstance(c, bool):
                fail(f"rungs hold Python ints, found a {type(c).__name__}")
    if not isinstance(winner, int) or isinstance(winner, bool):
        fail(f"the winner must be a Python int, got a {type(winner).__name__}")
    return [rungs, winner]


def halving(sol, c):
    return checked(sol.call("successive_halving", *c.args, **c.kwargs))


def trusted(c):
    """The statement's rules with Python sorting, in the grader."""
    losses, eta = c.args
    table = losses.double().tolist()
    alive = list(range(len(table)))
    rungs = []
    for r in range(len(table[0])):
        ranked = sorted(alive, key=lambda i: (math.isnan(table[i][r]),
                                              0.0 if math.isnan(table[i][r]) else table[i][r],
                                              i))  # fmt: skip
        rungs.append(ranked)
        if len(ranked) == 1:
            break
        alive = ranked[: max(1, len(ranked) // eta)]
    return [rungs, rungs[-1][0]]


def default_eta(sol, c):
    return checked(sol.call("successive_halving", c.args[0]))


def trusted_default_eta(c):
    return trusted(case(c.args[0], 3))


def eta_refused(sol, c):
    losses = c.args[0]
    for eta in (1, 0):
        ok, answer = sol.batch([{"op": "call", "target": "successive_halving",
                                 "args": [losses, eta], "kwargs": {}}])[0]  # fmt: skip
        if ok or not str(answer).startswith("ValueError"):
            fail(f"eta={eta} should raise ValueError, got {answer if not ok else 'a result'}")


def budgets_shrink(sol, c):
    """Each rung keeps max(1, n // eta) of the last, taken from the top of its ranking."""
    losses, eta = c.args
    rungs, winner = checked(sol.call("successive_halving", losses, eta))
    if sorted(rungs[0]) != list(range(losses.shape[0])):
        fail("rung 0 must rank every config exactly once")
    for r in range(1, len(rungs)):
        keep = max(1, len(rungs[r - 1]) // eta)
        if sorted(rungs[r]) != sorted(rungs[r - 1][:keep]):
            fail(f"rung {r} should hold the best {keep} of rung {r - 1}")
    if winner != rungs[-1][0]:
        fail("the winner is the first of the last rung")


# ---------------------------------------------------------------- log_uniform


def uniforms(d, *, low=None, high=None):
    u = d.tensor(d.shape((0, 3), low=0, high=9), low=0.0, high=1.0)
    lo = low if low is not None else d.choice([1e-6, 1e-4, 3e-4, 0.01])
    hi = high if high is not None else lo * d.choice([10.0, 1e3, 1e5])
    return case(u, lo, hi)


def trusted_log_uniform(c):
    u, lo, hi = c.args
    out = torch.exp(math.log(lo) + u.double() * (math.log(hi) - math.log(lo)))
    return out.to(u.dtype)


def bounds_refused(sol, c):
    u = c.args[0]
    for lo, hi in [(0.0, 1.0), (-1e-3, 1e-1), (1e-2, 1e-2), (1e-1, 1e-3)]:
        ok, answer = sol.batch([{"op": "call", "target": "log_uniform", "args": [u, lo, hi],
                                 "kwargs": {}}])[0]  # fmt: skip
        if ok or not str(answer).startswith("ValueError"):
            fail(f"log_uniform(u, {lo}, {hi}) should raise ValueError, got "
                 f"{answer if not ok else 'a tensor'}")


def equal_decades(sol, c):
    """log10 of the output is an affine function of u: equal steps of u, equal ratios."""
    u = torch.linspace(0.0, 0.9375, 16, dtype=torch.float64)
    _, lo, hi = c.args
    out = sol.call("log_uniform", u, lo, hi)
    expect_close(torch.log(out), math.log(lo) + u * (math.log(hi) - math.log(lo)),
                 "log of the samples", scale=10)  # fmt: skip
    expect_close(out[0], torch.tensor(lo, dtype=torch.float64), "the sample at u = 0")


TIMED_LOSSES = torch.rand(81, 5, generator=torch.Generator().manual_seed(0))


def timed(d):
    return case(TIMED_LOSSES, 3)


DECLARATIONS = [
    values("successive halving on drawn curves", halving, grid, expect=trusted, visible=True,
           cases=3, dtypes=("float64",), description="every rung's ranking and the winner"),
    values("drawn problems match the reference", halving,
           lambda d: grid(d, configs=d.size(2, 90), rungs=d.size(2, 7)),
           dtypes=("float32", "float64"), cases=4),
    edge("ties rank by config index", halving,
         lambda d: grid(d, configs=d.size(6, 40), levels=2), expect=trusted, cases=4,
         dtypes=("float64",), description="losses on a coarse grid"),
    edge("only three distinct loss values", halving, heavy_ties, expect=trusted, cases=4),
    edge("diverged configs (NaN) rank last", halving,
         lambda d: grid(d, configs=d.size(4, 30), nans=d.integer(1, 4)), expect=trusted,
         cases=4, dtypes=("float64",)),
    edge("every loss NaN", halving,
         lambda d: case(torch.full((d.size(2, 12), d.size(1, 4)), math.nan), d.choice([2, 3])),
         expect=trusted, cases=2),
    edge("infinite losses rank before NaN", halving,
         lambda d: case(torch.tensor([[math.nan, 1.0], [math.inf, 2.0], [-math.inf, 3.0],
                                      [math.inf, 0.5], [0.5, math.nan]]), 2),
         expect=trusted, cases=1),  # fmt: skip
    edge("one config", halving, lambda d: grid(d, configs=1), expect=trusted, cases=2,
         dtypes=("float64",)),
    edge("one rung: the best at the smallest budget wins", halving,
         lambda d: grid(d, rungs=1, configs=d.size(2, 20)), expect=trusted, cases=2,
         dtypes=("float64",)),
    edge("rungs run out before one config is left", halving,
         lambda d: grid(d, configs=d.size(20, 60), rungs=2, eta=2), expect=trusted, cases=2,
         dtypes=("float64",)),
    edge("eta larger than the number of configs", halving,
         lambda d: grid(d, configs=d.size(2, 5), rungs=3, eta=8), expect=trusted, cases=2,
         dtypes=("float64",)),
    edge("eta left at its default", default_eta,
         lambda d: grid(d, configs=d.size(9, 60), rungs=d.size(2, 6)),
         expect=trusted_default_eta, cases=3,
         dtypes=("float64",)),
    prop("each rung keeps the top max(1, n // eta) of the last", budgets_shrink,
         lambda d: grid(d, configs=d.size(5, 90)), cases=3),
    prop("eta below 2 raises ValueError", eta_refused, grid, cases=1),
    values("log_uniform matches the formula", "log_uniform", uniforms,
           expect=trusted_log_uniform, visible=True, dtypes=("float32", "float64"), cases=3),
    values("log_uniform: drawn ranges match the reference", "log_uniform", uniforms,
           dtypes=("float32", "float64"), cases=3),
    edge("log_uniform of an empty or 0-dim tensor", "log_uniform",
         lambda d: case(d.tensor(((), (0,), (3, 0))[d.case % 3], low=0.0, high=1.0), 1e-3, 1.0),
         expect=trusted_log_uniform, cases=3),
    shapes("log_uniform keeps shape and dtype", "log_uniform", uniforms,
           dtypes=("float32", "float64"), cases=2),
    gradients("log_uniform's gradient with respect to u", "log_uniform",
              lambda d: uniforms(d, low=1e-3, high=1.0), cases=2),
    prop("equal steps of u give equal ratios", equal_decades, uniforms, cases=2),
    prop("low <= 0 or low >= high raises ValueError", bounds_refused, uniforms, cases=1),
    nontrivial("log_uniform is not zero", "log_uniform", lambda d: uniforms(d, low=0.1, high=10.0)),
    performance("time against the reference", "successive_halving", timed,
                description="81 configs, 5 rungs, eta 3; reported with its spread, not "
                "graded in this exercise"),
]
