import torch

from sandbox.grading import (
    case,
    edge,
    expect_close,
    fail,
    gradients,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)


def schedule(num_steps):
    """A trusted DDPM schedule in float64: betas spaced by hand, alpha_bar by a loop."""
    betas = torch.linspace(1e-4, 0.02, num_steps, dtype=torch.float64)
    bars, running = [], 1.0
    for b in betas.tolist():
        running *= 1.0 - b
        bars.append(running)
    return torch.tensor(bars, dtype=torch.float64)


def steps(d):
    """Arguments of linear_beta_schedule: a drawn length and drawn endpoints."""
    start = d.choice([1e-4, 5e-4, 1e-3])
    return case(d.size(2, 1000), start, d.choice([0.02, 0.05, 0.2]))


def hand_spaced(c):
    n, start, end = c.args
    i = torch.arange(n, dtype=torch.float64)
    return start + (end - start) * i / max(n - 1, 1)


def drawn_betas(d):
    return case(d.tensor((d.size(1, 300),), low=1e-4, high=0.3))


def hand_product(c):
    (betas,) = c.args
    out, running = [], torch.ones((), dtype=torch.float64)
    for b in betas.double():
        running = running * (1.0 - b)
        out.append(running)
    return torch.stack(out).to(betas.dtype)


def noising(d, dims=None, num_steps=None, t=None):
    """x0 of rank 1 to 4 with a batch first, per-sample steps, unit-normal noise."""
    dims = dims if dims is not None else d.integer(1, 4)
    num_steps = num_steps if num_steps is not None else d.choice([10, 100, 1000])
    b = d.size(1, 8)
    feat = tuple(d.size(1, 6) for _ in range(dims - 1))
    x0 = d.tensor((b, *feat), low=-1, high=1)
    noise = d.tensor((b, *feat), normal=True)
    steps_ = t(b, num_steps) if t is not None else d.integers((b,), 0, num_steps)
    return case(x0, steps_, noise, schedule(num_steps))


def images(d):
    return noising(d, dims=4)


def closed_form(c):
    """sqrt(ab_t) x0 + sqrt(1 - ab_t) noise, one sample at a time, in float64."""
    x0, t, noise, bars = c.args
    rows = [
        bars[t[i]].sqrt() * x0[i].double() + (1 - bars[t[i]]).sqrt() * noise[i].double()
        for i in range(x0.shape[0])
    ]
    return torch.stack(rows).to(x0.dtype)


def shaped(value, shape, where):
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def coefficients_are_a_rotation(sol, c):
    """x_t is a x0 + s noise with a^2 + s^2 = 1: read a with noise = 0, s with x0 = 0."""
    x0, t, _, bars = c.args
    one = torch.ones_like(x0)
    a = shaped(sol.call("q_sample", one, t, torch.zeros_like(x0), bars), x0.shape, "x0 term")
    s = shaped(sol.call("q_sample", torch.zeros_like(x0), t, one, bars), x0.shape, "noise term")
    expect_close(
        a.double() ** 2 + s.double() ** 2,
        torch.ones_like(x0, dtype=torch.float64),
        "a^2 + s^2 for every element",
    )


def each_sample_uses_its_own_step(sol, c):
    """Noising the batch equals noising each sample alone with its own step."""
    x0, t, noise, bars = c.args
    whole = shaped(sol.call("q_sample", x0, t, noise, bars), x0.shape, "x_t")
    for i in range(x0.shape[0]):
        alone = sol.call("q_sample", x0[i : i + 1], t[i : i + 1], noise[i : i + 1], bars)
        expect_close(
            shaped(alone, x0[i : i + 1].shape, f"sample {i} alone"),
            whole[i : i + 1],
            f"sample {i} noised alone against in the batch",
        )


def signal_fades(sol, c):
    """With no noise, x_t / x0 = sqrt(alpha_bar_t), which falls as t grows."""
    x0, _, _, bars = c.args
    n = bars.shape[0]
    t = torch.tensor([0, n // 2, n - 1])
    ones = torch.ones((3, 2), dtype=x0.dtype)
    out = shaped(sol.call("q_sample", ones, t, torch.zeros_like(ones), bars), (3, 2), "x_t")
    expect_close(out[:, 0].double(), bars[t].sqrt(), "sqrt(alpha_bar) at t = 0, T/2, T-1")


def extreme_steps(d):
    """Every sample at t = 0 or at t = T - 1."""
    return noising(
        d,
        dims=d.integer(1, 3),
        num_steps=1000,
        t=lambda b, n: torch.tensor([d.choice([0, n - 1]) for _ in range(b)]),
    )


def default_pipeline(sol, c):
    """The default schedule, through your own alpha_bars, against the trusted float64 one."""
    (n,) = c.args
    betas = shaped(sol.call("linear_beta_schedule", n), (n,), "betas")
    bars = shaped(sol.call("alpha_bars", betas), (n,), "alpha_bars")
    expect_close(bars, schedule(n), f"alpha_bar of the default {n}-step schedule")


def timing_case(d):
    """A batch of 16 3x32x32 images, steps drawn from a 1000-step schedule."""
    return noising(d, dims=4, num_steps=1000)


DECLARATIONS = [
    values(
        "a linear schedule, both ends included",
        "linear_beta_schedule",
        steps,
        visible=True,
        expect=hand_spaced,
        description="num_steps from 2 to 1000",
    ),
    values(
        "alpha_bar is the running product of 1 - beta",
        "alpha_bars",
        drawn_betas,
        visible=True,
        expect=hand_product,
        dtypes=("float32", "float64"),
        cases=4,
    ),
    values(
        "noising a batch of images",
        "q_sample",
        images,
        visible=True,
        expect=closed_form,
        description="x0 of shape (B, C, H, W), one step per sample",
    ),
    values(
        "noising samples of any rank, float32 and float64",
        "q_sample",
        noising,
        cases=5,
        dtypes=("float32", "float64"),
        expect=closed_form,
    ),
    shapes(
        "x_t keeps x0's shape and dtype",
        "q_sample",
        noising,
        dtypes=("float32", "float64", "float16"),
    ),
    shapes("the schedule is float64", "linear_beta_schedule", steps),
    gradients(
        "gradients with respect to x0, noise and alpha_bar",
        "q_sample",
        lambda d: noising(d, num_steps=10),
        cases=3,
    ),
    prop(
        "the two coefficients' squares sum to one",
        coefficients_are_a_rotation,
        noising,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    prop("each sample uses its own step", each_sample_uses_its_own_step, noising, cases=3),
    prop(
        "the signal fades as t grows",
        signal_fades,
        lambda d: noising(d, num_steps=d.choice([10, 1000])),
        cases=2,
    ),
    values(
        "schedules of drawn lengths and ends",
        "linear_beta_schedule",
        steps,
        cases=4,
        expect=hand_spaced,
    ),
    values(
        "alpha_bar in float64",
        "alpha_bars",
        drawn_betas,
        cases=3,
        dtypes=("float64",),
        expect=hand_product,
    ),
    prop(
        "the default schedule's alpha_bar",
        default_pipeline,
        lambda d: case(d.choice([50, 1000])),
        cases=2,
    ),
    edge(
        "a one-step schedule",
        "linear_beta_schedule",
        lambda d: case(1, d.choice([1e-4, 0.01]), 0.02),
        cases=2,
    ),
    edge(
        "the first and the last step",
        "q_sample",
        extreme_steps,
        expect=closed_form,
        dtypes=("float32", "float64"),
    ),
    edge(
        "a batch of one 1-D sample",
        "q_sample",
        lambda d: noising(d, dims=1, num_steps=d.choice([10, 1000])),
        cases=2,
    ),
    nontrivial("x_t is not zero", "q_sample", noising),
    performance(
        "time against the reference",
        "q_sample",
        timing_case,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
]
