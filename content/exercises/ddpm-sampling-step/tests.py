import math

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


def linear(num_steps):
    return torch.linspace(1e-4, 0.02, num_steps, dtype=torch.float64)


def products(betas):
    """alpha_bar by a Python loop, as plain floats."""
    out, running = [], 1.0
    for b in betas.tolist():
        running *= 1.0 - b
        out.append(running)
    return out


def step(d, dims=None, num_steps=None, t=None, scale=1.0, **kwargs):
    """x_t, t, eps_pred, betas, noise of a drawn batch; the keywords go to p_sample_step."""
    dims = dims if dims is not None else d.integer(1, 4)
    num_steps = num_steps if num_steps is not None else d.choice([10, 100, 1000])
    b = d.size(1, 8)
    feat = tuple(d.size(1, 5) for _ in range(dims - 1))
    x_t = d.tensor((b, *feat), normal=True) * scale
    eps = d.tensor((b, *feat), normal=True)
    noise = d.tensor((b, *feat), normal=True)
    steps_ = t(b, num_steps) if t is not None else d.integers((b,), 0, num_steps)
    return case(x_t, steps_, eps, linear(num_steps), noise, **kwargs)


def any_setting(d, **kw):
    return step(
        d, variance=d.choice(["beta", "posterior"]), clip_denoised=d.choice([False, True]), **kw
    )


def x0_case(d, **kw):
    """Arguments of predict_x0, from a drawn step."""
    x_t, t, eps, betas, _ = step(d, **kw).args
    return case(x_t, t, eps, torch.tensor(products(betas), dtype=torch.float64))


def by_hand(c):
    """The reverse step one sample at a time, from plain floats in float64."""
    x_t, t, eps, betas, noise = c.args
    variance = c.kwargs.get("variance", "beta")
    clip = c.kwargs.get("clip_denoised", False)
    bars = products(betas)
    rows = []
    for i in range(x_t.shape[0]):
        s = int(t[i])
        beta, ab = float(betas[s]), bars[s]
        ab_prev = bars[s - 1] if s > 0 else 1.0
        x, e, z = x_t[i].double(), eps[i].double(), noise[i].double()
        if clip:
            x0 = ((x - math.sqrt(1 - ab) * e) / math.sqrt(ab)).clamp(-1, 1)
            mean = (math.sqrt(ab_prev) * beta * x0 + math.sqrt(1 - beta) * (1 - ab_prev) * x) / (
                1 - ab
            )
        else:
            mean = (x - beta / math.sqrt(1 - ab) * e) / math.sqrt(1 - beta)
        var = beta if variance == "beta" else beta * (1 - ab_prev) / (1 - ab)
        rows.append(mean + (math.sqrt(var) * z if s > 0 else 0 * z))
    return torch.stack(rows).to(x_t.dtype)


def shaped(value, shape, where):
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def noised(c):
    """A clean x0 in [-1, 1], its true noise and x_t built from them in float64."""
    x_t, t, eps, betas, _ = c.args
    x0 = (x_t.double() / 3).clamp(-1, 1)
    bars = torch.tensor(products(betas), dtype=torch.float64)
    ab = bars[t].reshape(-1, *([1] * (x0.dim() - 1)))
    return x0, eps.double(), ab.sqrt() * x0 + (1 - ab).sqrt() * eps.double(), bars


def perfect_noise_recovers_x0(sol, c):
    x0, eps, x_t, bars = noised(c)
    got = shaped(sol.call("predict_x0", x_t, c.args[1], eps, bars), x0.shape, "x0 estimate")
    expect_close(got, x0, "x0 recovered from the true noise", scale=100)


def mean_is_the_posterior_mean(sol, c):
    """With the true noise, the step's mean (noise = 0) is the mean of q(x_{t-1} | x_t, x0):
    (sqrt(ab_prev) beta x0 + sqrt(alpha) (1 - ab_prev) x_t) / (1 - ab)."""
    x0, eps, x_t, bars = noised(c)
    t, betas = c.args[1], c.args[3]
    ab_prev = torch.cat([torch.ones(1, dtype=torch.float64), bars[:-1]])
    shape = (-1, *([1] * (x0.dim() - 1)))
    beta, ab, abp = betas[t].reshape(shape), bars[t].reshape(shape), ab_prev[t].reshape(shape)
    want = (abp.sqrt() * beta * x0 + (1 - beta).sqrt() * (1 - abp) * x_t) / (1 - ab)
    got = sol.call("p_sample_step", x_t, t, eps, betas, torch.zeros_like(x_t), **c.kwargs)
    expect_close(
        shaped(got, x0.shape, "x_{t-1}"), want, "mean against q's posterior mean", scale=100
    )


def last_step_is_the_x0_estimate(sol, c):
    """At t = 0 the step adds no noise and returns predict_x0 (clipped when asked)."""
    x_t, t, eps, betas, noise = c.args
    zero = torch.zeros_like(t)
    bars = torch.tensor(products(betas), dtype=torch.float64)
    x0 = shaped(sol.call("predict_x0", x_t, zero, eps, bars), x_t.shape, "x0 estimate")
    if c.kwargs["clip_denoised"]:
        x0 = x0.clamp(-1, 1)
    for z in (noise, 5 * noise + 1):
        got = sol.call("p_sample_step", x_t, zero, eps, betas, z, **c.kwargs)
        expect_close(shaped(got, x_t.shape, "x_{-1}"), x0, "step at t = 0 against x0 estimate")


def noise_scale(sol, c):
    """The part of the output that the noise adds is sigma_t * noise, sigma_t by hand."""
    x_t, t, eps, betas, noise = c.args
    bars = products(betas)
    sigma = []
    for s in t.tolist():
        prev = bars[s - 1] if s > 0 else 1.0
        var = betas[s] if c.kwargs["variance"] == "beta" else betas[s] * (1 - prev) / (1 - bars[s])
        sigma.append(math.sqrt(float(var)) if s > 0 else 0.0)
    sigma = torch.tensor(sigma, dtype=torch.float64).reshape(-1, *([1] * (x_t.dim() - 1)))
    with_noise = sol.call("p_sample_step", x_t, t, eps, betas, noise, **c.kwargs)
    without = sol.call("p_sample_step", x_t, t, eps, betas, torch.zeros_like(noise), **c.kwargs)
    got = shaped(with_noise, x_t.shape, "x_{t-1}") - shaped(without, x_t.shape, "x_{t-1}")
    expect_close(got, (sigma * noise.double()).to(x_t.dtype), "sigma_t * noise")


def each_sample_uses_its_own_step(sol, c):
    x_t, t, eps, betas, noise = c.args
    whole = shaped(sol.call("p_sample_step", *c.args, **c.kwargs), x_t.shape, "x_{t-1}")
    for i in range(x_t.shape[0]):
        one = slice(i, i + 1)
        alone = sol.call("p_sample_step", x_t[one], t[one], eps[one], betas, noise[one], **c.kwargs)
        expect_close(
            shaped(alone, x_t[one].shape, f"sample {i} alone"),
            whole[one],
            f"sample {i} stepped alone against in the batch",
        )


def clipped_stays_inside(sol, c):
    """Clipping makes the step a mix of x0 in [-1, 1] and x_t: with x_t in [-1, 1] and no
    noise, x_{t-1} stays in [-1, 1]."""
    x_t, t, eps, betas, _ = c.args
    x_t = x_t.clamp(-1, 1)
    got = sol.call(
        "p_sample_step",
        x_t,
        t,
        10 * eps,
        betas,
        torch.zeros_like(x_t),
        variance="posterior",
        clip_denoised=True,
    )
    got = shaped(got, x_t.shape, "x_{t-1}")
    if bool((got.abs() > 1 + 1e-5).any()):
        fail(f"a clipped step left [-1, 1]: max |x| = {float(got.abs().max()):.4f}")


def extreme_steps(d, **kw):
    return any_setting(
        d,
        num_steps=1000,
        t=lambda b, n: torch.tensor([d.choice([0, 1, n - 1]) for _ in range(b)]),
        **kw,
    )


def at_zero(d):
    return step(
        d,
        t=lambda b, n: torch.zeros(b, dtype=torch.int64),
        variance=d.choice(["beta", "posterior"]),
        clip_denoised=d.choice([False, True]),
    )


def grad_case(d):
    """Small float64 steps; betas passed by keyword, so the gradients checked are those of
    x_t, eps_pred and noise."""
    x_t, t, eps, betas, noise = step(d, num_steps=10, dims=d.integer(1, 3)).args
    return case(
        x_t,
        t,
        eps,
        noise=noise,
        betas=betas,
        variance=d.choice(["beta", "posterior"]),
        clip_denoised=d.choice([False, True]),
    )


def x0_grad_case(d):
    """predict_x0's arguments, alpha_bars by keyword: the gradients checked are those of
    x_t and eps_pred."""
    x_t, t, eps, bars = x0_case(d, num_steps=10).args
    return case(x_t, t, eps, alpha_bars=bars)


def timing_case(d):
    """A batch of 16 3x32x32 images on a 1000-step schedule."""
    shape = (16, 3, 32, 32)
    x_t, eps, noise = (d.tensor(shape, normal=True) for _ in range(3))
    return case(x_t, d.integers((16,), 0, 1000), eps, linear(1000), noise)


DECLARATIONS = [
    values(
        "the x0 estimate",
        "predict_x0",
        x0_case,
        visible=True,
        dtypes=("float32", "float64"),
        description="x0 = (x_t - sqrt(1 - ab) eps) / sqrt(ab)",
    ),
    values(
        "a step with variance beta",
        "p_sample_step",
        lambda d: step(d),
        visible=True,
        expect=by_hand,
        description="default settings, one step per sample",
    ),
    values(
        "a step with the posterior variance",
        "p_sample_step",
        lambda d: step(d, variance="posterior"),
        visible=True,
        expect=by_hand,
    ),
    values(
        "a clipped step",
        "p_sample_step",
        lambda d: step(d, clip_denoised=True, scale=2.0, variance=d.choice(["beta", "posterior"])),
        expect=by_hand,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    values(
        "every setting, float32 and float64",
        "p_sample_step",
        any_setting,
        cases=5,
        dtypes=("float32", "float64"),
        expect=by_hand,
    ),
    values("x0 estimates of any rank", "predict_x0", x0_case, cases=4, dtypes=("float64",)),
    shapes(
        "x_{t-1} keeps x_t's shape and dtype",
        "p_sample_step",
        any_setting,
        dtypes=("float32", "float64", "float16"),
    ),
    gradients(
        "gradients with respect to x_t, eps_pred and noise", "p_sample_step", grad_case, cases=4
    ),
    gradients("gradients of the x0 estimate", "predict_x0", x0_grad_case, cases=2),
    prop(
        "the true noise recovers x0",
        perfect_noise_recovers_x0,
        lambda d: step(d),
        cases=3,
        dtypes=("float64",),
    ),
    prop(
        "the mean is q's posterior mean",
        mean_is_the_posterior_mean,
        any_setting,
        cases=4,
        dtypes=("float64",),
    ),
    prop(
        "t = 0 returns the x0 estimate, without noise",
        last_step_is_the_x0_estimate,
        at_zero,
        cases=3,
    ),
    prop(
        "the noise is scaled by sigma_t",
        noise_scale,
        lambda d: step(
            d, variance=d.choice(["beta", "posterior"]), clip_denoised=d.choice([False, True])
        ),
        cases=4,
        dtypes=("float64",),
    ),
    prop("each sample uses its own step", each_sample_uses_its_own_step, any_setting, cases=3),
    prop("a clipped step stays in [-1, 1]", clipped_stays_inside, lambda d: step(d), cases=3),
    edge(
        "the first, second and last steps",
        "p_sample_step",
        extreme_steps,
        expect=by_hand,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    edge(
        "a one-step schedule",
        "p_sample_step",
        lambda d: any_setting(d, num_steps=1),
        expect=by_hand,
        cases=3,
    ),
    edge(
        "samples with no feature dimension",
        "p_sample_step",
        lambda d: any_setting(d, dims=1),
        expect=by_hand,
        cases=2,
    ),
    nontrivial("x_{t-1} is not zero", "p_sample_step", any_setting),
    performance(
        "time against the reference",
        "p_sample_step",
        timing_case,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
]
