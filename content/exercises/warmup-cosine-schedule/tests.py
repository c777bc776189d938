import math

import torch

from sandbox.grading import api_rule, case, edge, expect_close, fail, performance, prop, shapes
from sandbox.grading import values


def schedule(d, *, warmup=None, decay=None, floor=None):
    """A schedule's settings (`decay` steps after `warmup`; min_lr = `floor` x base_lr); the
    scripts ask for every step up to a few past the end."""
    w = warmup if warmup is not None else d.size(1, 40)
    t = w + (decay if decay is not None else d.size(1, 200))
    base = d.choice([1e-4, 3e-4, 1e-3, 0.1, 1.0])
    ratio = floor if floor is not None else d.choice([0.0, 0.01, 0.1, 0.3])
    return case(base_lr=base, warmup_steps=w, total_steps=t, min_lr=base * ratio)


def curve(sol, c, *, pass_min_lr=True):
    """The rate at every step from 0 to total_steps + 5, as a float64 tensor."""
    k = c.kwargs
    steps = range(k["total_steps"] + 6)
    floor = (k["min_lr"],) if pass_min_lr else ()
    out = [sol.call("lr_at", s, k["base_lr"], k["warmup_steps"], k["total_steps"], *floor)
           for s in steps]
    for s, lr in zip(steps, out):
        if not isinstance(lr, float | int) or isinstance(lr, bool):
            fail(f"lr_at({s}, ...) returned {type(lr).__name__}, not a float")
    return torch.tensor(out, dtype=torch.float64)


def curve_default_floor(sol, c):
    """The whole curve with min_lr left out of every call."""
    return curve(sol, c, pass_min_lr=False)


def trusted(c):
    """The schedule written out from the statement's formulas, in the grader."""
    k = c.kwargs
    base, w, t, m = k["base_lr"], k["warmup_steps"], k["total_steps"], k["min_lr"]
    out = []
    for s in range(t + 6):
        if s >= t:
            out.append(m)
        elif s < w:
            out.append(base * s / w)
        else:
            out.append(m + (base - m) * (1 + math.cos(math.pi * (s - w) / (t - w))) / 2)
    return torch.tensor(out, dtype=torch.float64)


def landmarks(sol, c):
    """Step 0, the end of warm-up, the end of the schedule and beyond."""
    k = c.kwargs
    lrs = curve(sol, c)
    w, t = k["warmup_steps"], k["total_steps"]
    return torch.stack([lrs[0], lrs[w] if w < t else lrs[t], lrs[t], lrs[t + 5]])


def one_value(sol, c):
    k = c.kwargs
    return sol.call("lr_at", k["warmup_steps"], k["base_lr"], k["warmup_steps"],
                    k["total_steps"], k["min_lr"])


def shape_of_curve(sol, c):
    """Rises through warm-up, falls through decay, never leaves [min(0, min_lr), base_lr]."""
    k = c.kwargs
    lrs = curve(sol, c)
    w, t, base, m = k["warmup_steps"], k["total_steps"], k["base_lr"], k["min_lr"]
    rising, falling = lrs[: w + 1].diff(), lrs[w : t + 1].diff()
    if bool((rising <= 0).any()):
        fail(f"the rate does not rise at every warm-up step (warmup_steps={w})")
    if bool((falling > 1e-12 * base).any()):
        fail(f"the rate rises somewhere between warmup_steps={w} and total_steps={t}")
    expect_close(lrs[w], torch.tensor(base, dtype=torch.float64), "the rate at warmup_steps")
    expect_close(lrs[t:], torch.full_like(lrs[t:], m), "the rate from total_steps on")


def symmetric_decay(sol, c):
    """Cosine decay is point-symmetric about its midpoint: lr(w + i) + lr(t - i) is constant."""
    k = c.kwargs
    lrs = curve(sol, c)
    w, t, base, m = k["warmup_steps"], k["total_steps"], k["base_lr"], k["min_lr"]
    pairs = lrs[w : t + 1] + lrs[w : t + 1].flip(0)
    expect_close(pairs, torch.full_like(pairs, base + m), "lr(w + i) + lr(t - i)", scale=10)


def timed_step(d):
    """One step anywhere in a 1,000-step schedule with 100 warm-up steps, or past its end."""
    return case(d.integer(0, 1_100), 3e-4, 100, 1_000, 3e-5)


DECLARATIONS = [
    values("the whole schedule", curve, schedule, expect=trusted, visible=True, cases=3,
           dtypes=("float64",), description="every step from 0 to total_steps + 5"),
    values("drawn schedules match the reference", curve, schedule, cases=4, dtypes=("float64",)),
    values("the landmarks: step 0, warm-up end, total and after", landmarks, schedule,
           expect=lambda c: trusted(c)[[0, c.kwargs["warmup_steps"], c.kwargs["total_steps"],
                                       c.kwargs["total_steps"] + 5]],
           visible=True, cases=3, dtypes=("float64",)),
    edge("no warm-up", curve, lambda d: schedule(d, warmup=0), expect=trusted, cases=2,
         dtypes=("float64",), description="warmup_steps = 0: step 0 is at base_lr"),
    edge("one warm-up step, one decay step", curve, lambda d: schedule(d, warmup=1, decay=1),
         expect=trusted, cases=1, dtypes=("float64",)),
    edge("a floor well above zero", curve,
         lambda d: schedule(d, floor=d.choice([0.2, 0.5])),
         expect=trusted, cases=2, dtypes=("float64",)),
    edge("warm-up as long as the schedule", curve,
         lambda d: schedule(d, warmup=d.size(1, 9), decay=0, floor=0.1),
         expect=trusted, cases=2, dtypes=("float64",)),
    edge("min_lr left at its default", curve_default_floor, lambda d: schedule(d, floor=0.0),
         expect=trusted, cases=2, dtypes=("float64",),
         description="lr_at(step, base_lr, warmup_steps, total_steps) with no min_lr given"),
    shapes("returns a Python float", one_value, schedule, cases=1),
    prop("rises in warm-up, falls in decay, rests at min_lr", shape_of_curve, schedule, cases=3),
    prop("the cosine is symmetric about its midpoint", symmetric_decay, schedule, cases=3),
    performance("time against the reference", "lr_at", timed_step, calls=32,
                description="the rate at one step, 32 steps per round: a call takes "
                "microseconds, so most of the time is the sending of its arguments; reported "
                "with its spread, not graded in this exercise"),
    api_rule("writes the schedule itself", visible=True),
]
