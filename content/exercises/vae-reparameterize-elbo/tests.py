import torch
from torch.distributions import Normal, kl_divergence

from sandbox.grading import (
    api_rule,
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


def problem(d, dims=None, scale=4.0, soft=None, b=None, beta=None, latent_scale=1.5):
    """Decoder logits and targets of rank 2 to 4 (batch first), an encoder's mu and logvar."""
    dims = dims if dims is not None else d.integer(2, 4)
    b = b if b is not None else d.size(1, 8)
    feat = tuple(d.size(1, 6) for _ in range(dims - 1))
    z = d.size(1, 8)
    logits = d.tensor((b, *feat), low=-scale, high=scale)
    soft = soft if soft is not None else d.choice([False, True])
    x = d.tensor((b, *feat), low=0, high=1)
    if not soft:
        x = (x > 0.5).to(x.dtype)
    mu = d.tensor((b, z), low=-latent_scale, high=latent_scale)
    logvar = d.tensor((b, z), low=-2 * latent_scale, high=latent_scale)
    kwargs = {} if beta is None else {"beta": beta}
    return case(logits, x, mu, logvar, **kwargs)


def with_beta(d, **kw):
    return problem(d, beta=d.choice([0.0, 0.5, 4.0]), **kw)


def latents(d):
    b, z = d.size(1, 8), d.size(1, 16)
    return case(
        d.tensor((b, z), low=-2, high=2),
        d.tensor((b, z), low=-4, high=2),
        d.tensor((b, z), normal=True),
    )


def by_hand(c):
    """The negative ELBO from log-sigmoid terms and torch.distributions, in float64."""
    logits, x, mu, logvar = (a.double() for a in c.args)
    beta = c.kwargs.get("beta", 1.0)
    b = logits.shape[0]
    log_p = torch.nn.functional.logsigmoid(logits)
    log_not_p = torch.nn.functional.logsigmoid(-logits)
    recon = -(x * log_p + (1 - x) * log_not_p).sum() / b
    kl = kl_divergence(Normal(mu, (0.5 * logvar).exp()), Normal(0.0, 1.0)).sum() / b
    dtype = c.args[0].dtype
    return ((recon + beta * kl).to(dtype), recon.to(dtype), kl.to(dtype))


def triple(value, where):
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        fail(f"{where}: expected (loss, recon, kl), got {type(value).__name__}")
    for v in value:
        if not isinstance(v, torch.Tensor) or v.dim() != 0:
            fail(f"{where}: expected three 0-d tensors")
    return value


def loss_is_recon_plus_beta_kl(sol, c):
    for beta in (0.0, 1.0, 3.5):
        loss, recon, kl = triple(sol.call("vae_loss", *c.args, beta=beta), f"beta = {beta}")
        expect_close(loss, recon + beta * kl, f"loss against recon + {beta} * kl")


def kl_vanishes_at_the_prior(sol, c):
    logits, x, mu, _ = c.args
    zeros = torch.zeros_like(mu)
    _, _, kl = triple(sol.call("vae_loss", logits, x, zeros, zeros), "mu = logvar = 0")
    expect_close(kl, torch.zeros((), dtype=mu.dtype), "KL of the prior against itself")


def samples_add_up(sol, c):
    """recon and kl are per-sample sums averaged over the batch: the loss of a batch is the
    mean of the losses of its samples alone."""
    logits, x, mu, logvar = c.args
    whole = triple(sol.call("vae_loss", *c.args, **c.kwargs), "the batch")
    parts = [
        triple(
            sol.call(
                "vae_loss",
                logits[i : i + 1],
                x[i : i + 1],
                mu[i : i + 1],
                logvar[i : i + 1],
                **c.kwargs,
            ),
            f"sample {i}",
        )
        for i in range(logits.shape[0])
    ]
    for k, name in enumerate(("loss", "recon", "kl")):
        expect_close(
            whole[k],
            torch.stack([p[k] for p in parts]).mean(),
            f"{name} of the batch against the mean over samples",
        )


def logit_gradient(sol, c):
    """d recon / d logits = (sigmoid(l) - x) / B, finite for logits of +-100."""
    logits, x, mu, logvar = c.args
    v = (
        torch.ones((), dtype=logits.dtype),
        torch.zeros((), dtype=logits.dtype),
        torch.zeros((), dtype=logits.dtype),
    )
    _, grads = sol.vjp("vae_loss", (logits, x, mu, logvar), v, {"beta": 0.0})
    want = (torch.sigmoid(logits.double()) - x.double()) / logits.shape[0]
    expect_close(grads[0], want.to(logits.dtype), "gradient of the loss w.r.t. the logits")


def sigma_scales_the_noise(sol, c):
    """z - mu = exp(logvar / 2) * eps: zero noise gives mu, and z is linear in eps."""
    mu, logvar, eps = c.args
    expect_close(
        sol.call("reparameterize", mu, logvar, torch.zeros_like(eps)), mu, "z with eps = 0"
    )
    z1 = sol.call("reparameterize", mu, logvar, eps)
    z3 = sol.call("reparameterize", mu, logvar, 3 * eps)
    if not isinstance(z1, torch.Tensor) or not isinstance(z3, torch.Tensor):
        fail("reparameterize must return a tensor")
    expect_close(z3 - mu, 3 * (z1 - mu), "z - mu with eps tripled")
    want = (0.5 * logvar.double()).exp() * eps.double()
    expect_close(z1 - mu, want.to(mu.dtype), "z - mu against exp(logvar / 2) * eps")


def saturated(d):
    """Logits of exactly +-100, exactly 0 (where a max(l, 0) + log1p(exp(-|l|)) form has
    the wrong gradient, its two kinks at 0) and some moderate ones; hard and soft targets."""
    c = problem(d, dims=2)
    logits = c.args[0]
    signs = torch.where(logits > 0, 100.0, -100.0).to(logits.dtype)
    logits = torch.where(logits.abs() > 1, signs, logits)
    logits = torch.where(logits.abs() < 0.3, torch.zeros_like(logits), logits)
    logits[0, 0] = 0.0
    return case(logits, *c.args[1:])


def timing_case(d):
    """A batch of 128 flattened 28x28 images and 32 latent dimensions."""
    logits = d.tensor((128, 784), low=-5, high=5)
    x = (d.tensor((128, 784), low=0, high=1) > 0.5).to(logits.dtype)
    mu, logvar = d.tensor((128, 32)), d.tensor((128, 32), low=-3, high=1)
    return case(logits, x, mu, logvar, 1.0)


DECLARATIONS = [
    values(
        "reparameterized latents",
        "reparameterize",
        latents,
        visible=True,
        dtypes=("float32", "float64"),
        description="z = mu + exp(logvar / 2) * eps",
    ),
    values(
        "loss, reconstruction and KL",
        "vae_loss",
        problem,
        visible=True,
        expect=by_hand,
        description="beta = 1, images of rank 2 to 4",
    ),
    values(
        "drawn beta, float32 and float64",
        "vae_loss",
        with_beta,
        cases=5,
        dtypes=("float32", "float64"),
        expect=by_hand,
    ),
    values(
        "soft targets and wide latents",
        "vae_loss",
        lambda d: problem(d, soft=True, latent_scale=3.0, beta=d.choice([0.1, 2.0])),
        expect=by_hand,
        cases=3,
        dtypes=("float64",),
    ),
    shapes(
        "three 0-d tensors in the inputs' dtype",
        "vae_loss",
        with_beta,
        dtypes=("float32", "float64"),
    ),
    gradients(
        "gradients with respect to the logits, x, mu and logvar",
        "vae_loss",
        lambda d: problem(d, dims=d.integer(2, 3), beta=d.choice([0.5, 2.0])),
        cases=3,
    ),
    gradients("gradients of the reparameterization", "reparameterize", latents, cases=2),
    prop("the loss is recon + beta * kl", loss_is_recon_plus_beta_kl, problem, cases=2),
    prop("the KL of the prior is zero", kl_vanishes_at_the_prior, problem, cases=2),
    prop("a batch's loss is the mean of its samples' losses", samples_add_up, with_beta, cases=3),
    prop(
        "sigma = exp(logvar / 2) scales the noise",
        sigma_scales_the_noise,
        latents,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    prop("the logits' gradient is (sigmoid - x) / B", logit_gradient, saturated, cases=3),
    edge(
        "logits of +-100 stay finite",
        "vae_loss",
        saturated,
        expect=by_hand,
        visible=True,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    edge("a batch of one sample", "vae_loss", lambda d: with_beta(d, b=1), expect=by_hand, cases=2),
    nontrivial("the loss is not zero", "vae_loss", problem),
    performance(
        "time against the reference",
        "vae_loss",
        timing_case,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
    api_rule(
        "computes the losses itself",
        visible=True,
        description="no built-in binary cross-entropy, no torch.distributions",
    ),
]
