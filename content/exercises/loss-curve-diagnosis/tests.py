import math

import torch

from sandbox.grading import case, edge, expect_close, fail, gradients, nontrivial, performance
from sandbox.grading import prop, shapes, values

LABELS = ("diverging", "overfitting", "underfitting", "plateau", "healthy")


# ---------------------------------------------------------------- smooth


def sequence_(d, *, length=None, beta=None):
    n = length if length is not None else d.size(1, 60)
    b = beta if beta is not None else d.choice([0.0, 0.3, 0.6, 0.9, 0.99])
    return case(d.tensor((n,), low=0.05, high=4.0), b)


def trusted_smooth(c):
    """The statement's recurrence in float64, in the grader."""
    x, beta = c.args
    s, out = 0.0, []
    for t, v in enumerate(x.double().tolist(), start=1):
        s = beta * s + (1 - beta) * v
        out.append(s / (1 - beta**t))
    return torch.tensor(out, dtype=torch.float64).to(x.dtype)


def constant_is_kept(sol, c):
    """Debiased smoothing of a constant sequence is that constant from the very first step."""
    x, beta = c.args
    const = torch.full_like(x, float(x[0]))
    expect_close(sol.call("smooth", const, beta), const, "smooth of a constant sequence")


def smoothing_is_linear(sol, c):
    """smooth(a x + b y) = a smooth(x) + b smooth(y): the debiased average is linear."""
    x, beta = c.args
    y = torch.linspace(0.5, 2.0, x.shape[0], dtype=x.dtype)
    lhs = sol.call("smooth", 2.0 * x + 3.0 * y, beta)
    rhs = 2.0 * sol.call("smooth", x, beta) + 3.0 * sol.call("smooth", y, beta)
    expect_close(lhs, rhs, "smooth(2x + 3y) against 2 smooth(x) + 3 smooth(y)", scale=10)


# ---------------------------------------------------------------- synthetic curves


def decay(d, n, *, start, floor, rate, noise):
    """start -> floor exponentially, with multiplicative noise (always positive)."""
    t = torch.arange(n, dtype=torch.float64)
    clean = floor + (start - floor) * torch.exp(-rate * t)
    return clean * (1 + noise * d.tensor((n,), low=-1.0, high=1.0, dtype=torch.float64))


def healthy(d):
    n = d.size(12, 60)
    train = decay(d, n, start=d.number(2.0, 3.0), floor=0.0, rate=d.number(0.02, 0.05),
                  noise=0.01)  # fmt: skip
    return case(train, train * d.number(1.02, 1.1))


def overfitting(d):
    n = d.size(20, 60)
    train = decay(d, n, start=2.5, floor=0.05, rate=d.number(0.08, 0.15), noise=0.01)
    turn = d.integer(n // 4, n // 2)
    t = torch.arange(n, dtype=torch.float64)
    val = 1.0 + 0.002 * (t - turn) ** 2 * d.number(1.0, 2.0)
    return case(train, val * (1 + 0.01 * d.tensor((n,), low=-1.0, high=1.0,
                                                 dtype=torch.float64)))  # fmt: skip


def exploding(d):
    n = d.size(12, 40)
    t = torch.arange(n, dtype=torch.float64)
    boom = d.integer(n // 3, n // 2)
    train = 2.0 * torch.exp(torch.clamp(t - boom, min=0) * d.number(0.2, 0.5))
    return case(train, train * 1.05)


def non_finite(d):
    c = healthy(d)
    train, val = c.args
    bad = (math.nan, math.inf, -math.inf)[d.case % 3]
    (train if d.case % 2 == 0 else val)[d.integer(0, train.shape[0] - 1)] = bad
    return case(train, val)


def plateau(d):
    n = d.size(24, 60)
    train = decay(d, n, start=d.number(2.0, 3.0), floor=d.number(0.1, 0.3),
                  rate=d.number(1.0, 1.5), noise=0.001)  # fmt: skip
    return case(train, train * d.number(1.0, 1.1))


def underfitting(d):
    n = d.size(16, 60)
    level = d.number(1.5, 2.5)
    train = decay(d, n, start=level, floor=level * d.number(0.7, 0.9), rate=2.0, noise=0.001)
    return case(train, train * d.number(1.0, 1.2))


def label_of(name):
    def expect(c):
        return name

    return expect


def random_walk(d, n):
    steps = d.tensor((n,), low=-0.15, high=0.12, dtype=torch.float64)
    return d.number(0.5, 3.0) * torch.exp(torch.cumsum(steps, 0))


def drawn_settings(d):
    return {"beta": d.choice([0.0, 0.5, 0.6, 0.9]), "window": d.integer(1, 8),
            "patience": d.integer(1, 6), "rise_tol": d.choice([0.0, 0.05, 0.2]),
            "plateau_tol": d.choice([0.0, 0.01, 0.05]),
            "diverge_factor": d.choice([1.0, 1.5, 3.0]),
            "underfit_ratio": d.choice([0.3, 0.5, 0.9])}  # fmt: skip


def many_curves(d):
    """Twenty-four pairs of random-walk curves, each with its own drawn settings."""
    pairs = []
    for _ in range(24):
        n = d.size(1, 50)
        train = random_walk(d, n)
        val = train * random_walk(d, n) / 2
        pairs.append([train, val, drawn_settings(d)])
    return case(data={"pairs": pairs})


def every_label(sol, c):
    out = []
    for train, val, settings in c.data["pairs"]:
        out.append(checked(sol.call("diagnose", train, val, **settings)))
    return out


def checked(label):
    if not isinstance(label, str) or label not in LABELS:
        fail(f"diagnose returned {label!r}, not one of {LABELS}")
    return label


def diagnosed(sol, c):
    return checked(sol.call("diagnose", *c.args, **c.kwargs))


# ---------------------------------------------------------------- exact thresholds


def at_thresholds(d):
    """beta = 0 (no smoothing) and curves on a grid of 1/8, so that each threshold is met
    with equality in floating point: the statement's comparisons decide."""
    k = d.case % 8

    def t(*values):
        return torch.tensor(values, dtype=torch.float64)

    falling = t(2.0, 1.5, 1.25, 1.0, 0.875, 0.75)
    if k == 0:  # end == diverge_factor x start exactly: not diverging
        return case(t(1.0, 1.25, 1.5, 1.75, 2.0), t(1.0, 1.25, 1.5, 1.75, 2.0), beta=0.0,
                    diverge_factor=2.0)  # fmt: skip
    if k == 1:  # val rose by exactly rise_tol: not overfitting
        return case(falling, t(2.0, 1.5, 1.0, 1.125, 1.25, 1.25), beta=0.0, rise_tol=0.25,
                    patience=3, window=10)  # fmt: skip
    if k == 2:  # the minimum exactly `patience` epochs before the end: overfitting
        return case(falling, t(2.0, 1.5, 1.0, 1.125, 1.25, 1.5), beta=0.0, rise_tol=0.25,
                    patience=3, window=10)  # fmt: skip
    if k == 3:  # a relative improvement of exactly plateau_tol over the window: healthy
        return case(t(4.0, 2.0, 1.0, 0.875, 0.75), t(4.0, 2.0, 1.0, 0.875, 0.75), beta=0.0,
                    plateau_tol=0.25, window=2)  # fmt: skip
    if k == 4:  # val jumps at the very last epoch: its minimum is too recent
        return case(falling, t(2.0, 1.5, 1.25, 1.0, 0.875, 1.5), beta=0.0, patience=3,
                    window=10)  # fmt: skip
    if k == 5:  # stalled at exactly underfit_ratio x start: a plateau, not underfitting
        flat = t(2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
        return case(flat, flat.clone(), beta=0.0, window=3, underfit_ratio=0.5)
    if k == 6:  # exactly window + 1 epochs, flat: the plateau rules apply
        flat = t(1.0, 1.0, 1.0, 1.0)
        return case(flat, flat.clone(), beta=0.0, window=3)
    # train flat (not falling) since val's minimum: not overfitting
    return case(t(2.0, 1.5, 1.0, 1.0, 1.0, 1.0), t(2.0, 1.5, 1.0, 1.25, 1.5, 1.5), beta=0.0,
                patience=2, rise_tol=0.25)  # fmt: skip


def near_defaults(d):
    """Eighty pairs of curves near the default thresholds: a val loss turning up a few
    epochs before the end by up to 15% an epoch, a train loss falling by about 1% an epoch, or
    growing by a factor between 1.2 and 2.8. The first two pairs have val's smoothed minimum
    exactly 2 and 3 epochs before the end."""
    pairs = []
    for after in (2, 3):
        n = d.size(8, 16)
        val = torch.tensor([1.0] * (n - 1 - after) + [0.5] + [2.0] * after, dtype=torch.float64)
        pairs.append([2.0 * torch.exp(-0.05 * torch.arange(n, dtype=torch.float64)), val])
    for _ in range(80):
        n = d.size(4, 40)
        t = torch.arange(n, dtype=torch.float64)
        kind = d.integer(0, 2)
        if kind == 0:
            train = random_walk(d, n)
            val = train * random_walk(d, n) / 2
        elif kind == 1:
            train = 2.0 * torch.exp(-d.choice([0.003, 0.01, 0.03]) * d.number(0.5, 1.0) * t)
            turn = max(0, n - 1 - d.integer(1, 6))
            up, down = d.number(0.0, d.choice([0.03, 0.15])), 0.01
            val = 1.0 + up * (t - turn).clamp(min=0) - down * (t - turn).clamp(max=0)
        else:
            train = torch.exp(t / max(n - 1, 1) * math.log(d.number(1.2, 2.8)))
            val = train * 1.1
        noise = 1 + 0.005 * d.tensor((n,), low=-1.0, high=1.0, dtype=torch.float64)
        pairs.append([train * noise, val])
    return case(data={"pairs": pairs})


def every_label_by_default(sol, c):
    """Every setting left at its default."""
    return [checked(sol.call("diagnose", train, val)) for train, val in c.data["pairs"]]


def overfitting_and_stalled(d):
    """Val has turned up and train has stalled: overfitting is checked before the plateau."""
    c = overfitting(d)
    train, val = c.args
    train = torch.full_like(train, 0.5) + torch.linspace(1e-3, 0.0, train.shape[0],
                                                         dtype=torch.float64)  # fmt: skip
    return case(train, val, plateau_tol=0.05)


def window_denominator(d):
    """beta = 0; the train loss drops from 2 to 1 at epoch 1, then falls to 0.8 over the last
    `window` epochs: r = (1 - 0.8) / 1 = 0.2, which divided by the last loss (0.25) or by the
    first (0.1) would land on the other side of plateau_tol. Even cases: plateau_tol 0.22, a
    plateau; odd cases: 0.15, healthy."""
    window = d.integer(1, 6)
    tail = torch.linspace(1.0, 0.8, window + 1, dtype=torch.float64)
    train = torch.cat([torch.tensor([2.0], dtype=torch.float64), tail])
    return case(train, train.clone(), beta=0.0, window=window,
                plateau_tol=0.22 if d.case % 2 == 0 else 0.15)  # fmt: skip


def short_window(d):
    """No more than `window` epochs after the first: the plateau rules do not apply."""
    n = d.size(1, 6)
    train = torch.full((n,), 2.0, dtype=torch.float64)
    return case(train, train.clone(), window=n - 1 + d.integer(1, 3))


def lengths_refused(sol, c):
    train, val = c.args
    for a, b in [(train, val[:-1]), (train[:0], val[:0])]:
        ok, answer = sol.batch([{"op": "call", "target": "diagnose", "args": [a, b],
                                 "kwargs": {}}])[0]  # fmt: skip
        if ok or not str(answer).startswith("ValueError"):
            fail(f"diagnose with lengths {a.shape[0]} and {b.shape[0]} should raise ValueError, "
                 f"got {answer if not ok else repr(answer)}")


TIMED_TRAIN = 2.0 * torch.exp(-0.01 * torch.arange(200, dtype=torch.float64))


def timed(d):
    return case(TIMED_TRAIN, TIMED_TRAIN * d.number(1.0, 1.2))


DECLARATIONS = [
    values("smooth follows the debiased recurrence", "smooth", sequence_,
           expect=trusted_smooth, visible=True, dtypes=("float32", "float64"), cases=3),
    values("smooth: drawn sequences match the reference", "smooth", sequence_,
           dtypes=("float32", "float64"), cases=4),
    edge("smooth with beta 0 is the identity", "smooth", lambda d: sequence_(d, beta=0.0),
         expect=lambda c: c.args[0].clone(), cases=2),
    edge("smooth with beta 0.999 on a short sequence", "smooth",
         lambda d: sequence_(d, length=d.size(1, 8), beta=0.999), expect=trusted_smooth,
         dtypes=("float64",), cases=2, description="the bias correction is nearly everything"),
    edge("smooth of an empty or one-element sequence", "smooth",
         lambda d: sequence_(d, length=d.case % 2), expect=trusted_smooth, cases=2),
    shapes("smooth keeps shape and dtype", "smooth", sequence_, dtypes=("float32", "float64"),
           cases=2),
    gradients("smooth's gradient", "smooth", lambda d: sequence_(d, length=d.size(1, 12)),
              cases=2),
    prop("smooth of a constant is the constant", constant_is_kept, sequence_, cases=3),
    prop("smooth is linear", smoothing_is_linear, lambda d: sequence_(d, length=d.size(2, 40)),
         cases=2),
    nontrivial("smooth is not zero", "smooth", sequence_),
    values("healthy curves", diagnosed, healthy, expect=label_of("healthy"), visible=True,
           dtypes=("float64",), cases=3),
    values("a val loss that turns up: overfitting", diagnosed, overfitting,
           expect=label_of("overfitting"), visible=True, dtypes=("float64",), cases=3),
    values("an exploding train loss: diverging", diagnosed, exploding,
           expect=label_of("diverging"), dtypes=("float64",), cases=3),
    edge("a NaN or inf in either curve: diverging", diagnosed, non_finite,
         expect=label_of("diverging"), dtypes=("float64",), cases=4),
    values("a train loss that flattened low: plateau", diagnosed, plateau,
           expect=label_of("plateau"), dtypes=("float64",), cases=3),
    values("a train loss stuck high: underfitting", diagnosed, underfitting,
           expect=label_of("underfitting"), dtypes=("float64",), cases=3),
    values("drawn curves and settings match the reference", every_label, many_curves,
           dtypes=("float64",), cases=6,
           description="random-walk curves, every threshold drawn"),
    values("curves near the default thresholds, settings left out", every_label_by_default,
           near_defaults, dtypes=("float64",), cases=3),
    edge("each threshold met exactly", diagnosed, at_thresholds, dtypes=("float64",), cases=8,
         description="beta 0 and exact binary fractions: equality with each threshold"),
    edge("overfitting is checked before plateau", diagnosed, overfitting_and_stalled,
         expect=label_of("overfitting"), dtypes=("float64",), cases=2),
    values("healthy curves at a small scale: the tolerances are relative", diagnosed,
           lambda d: case(*[x * 1e-3 for x in healthy(d).args]), expect=label_of("healthy"),
           dtypes=("float64",), cases=2),
    values("plateaued curves at a large scale", diagnosed,
           lambda d: case(*[x * 100 for x in plateau(d).args]), expect=label_of("plateau"),
           dtypes=("float64",), cases=2),
    edge("the window's improvement is relative to its first loss", diagnosed,
         window_denominator,
         expect=lambda c: "plateau" if c.kwargs["plateau_tol"] > 0.2 else "healthy",
         dtypes=("float64",), cases=4,
         description="r = (st[L - window] - st[L]) / st[L - window], near plateau_tol"),
    edge("too few epochs for the window", diagnosed, short_window, expect=label_of("healthy"),
         dtypes=("float64",), cases=2),
    edge("a single epoch", diagnosed, lambda d: case(d.tensor((1,), low=0.1, high=3.0),
                                                     d.tensor((1,), low=0.1, high=3.0)),
         expect=label_of("healthy"), cases=2),
    edge("float32 curves", diagnosed, lambda d: case(*[x.float() for x in overfitting(d).args]),
         expect=label_of("overfitting"), cases=2),
    prop("curves of different or zero length raise ValueError", lengths_refused, healthy,
         cases=1),
    performance("time against the reference", "diagnose", timed,
                description="two curves of 200 epochs; reported with its spread, not graded "
                "in this exercise"),
]
