import torch
import torch.nn.functional as F

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


def logits(d, scale=4.0, shape=None):
    shape = shape if shape is not None else d.shape(d.choice([(1, 1), (1, 2)]), low=1, high=12)
    return d.tensor(shape, low=-scale, high=scale)


def loss_case(d, scale=4.0):
    """Real and fake logits of independent shapes, (N,) or (N, 1) or (N, M)."""
    return case(logits(d, scale), logits(d, scale))


def saturated(d):
    """Logits of exactly +-100 and +-1000 mixed with moderate ones."""

    def push(x):
        big = torch.where(x > 0, 1.0, -1.0).to(x.dtype) * d.choice([100.0, 1000.0])
        return torch.where(x.abs() > 1, big, x)

    return case(push(logits(d)), push(logits(d)))


def trusted_d(c):
    real, fake = (a.double() for a in c.args)
    want = -F.logsigmoid(real).mean() - F.logsigmoid(-fake).mean()
    return want.to(c.args[0].dtype)


def trusted_g(c):
    (fake,) = c.args
    return (-F.logsigmoid(fake.double()).mean()).to(fake.dtype)


def one_set(d, scale=4.0):
    return case(logits(d, scale))


def one_saturated(d):
    return case(saturated(d).args[0])


def critic_params(d, dim, hidden=None):
    hidden = hidden if hidden is not None else d.size(1, 12)
    return {
        "w1": d.tensor((hidden, dim), low=-1, high=1),
        "b1": d.tensor((hidden,), low=-0.5, high=0.5),
        "w2": d.tensor((hidden,), low=-1, high=1),
        "b2": d.tensor((), low=-0.5, high=0.5),
    }


def penalty_case(d, b=None, dim=None, alpha=None, weight=None, as_kwargs=False):
    """A critic's weights and a batch of real/fake pairs with their mixing coefficients."""
    b = b if b is not None else d.size(1, 10)
    dim = dim if dim is not None else d.size(1, 8)
    params = critic_params(d, dim)
    real = d.tensor((b, dim), low=-2, high=2)
    fake = d.tensor((b, dim), low=-2, high=2)
    alpha = alpha(b) if alpha is not None else d.tensor((b,), low=0, high=1)
    kwargs = {} if weight is None else {"weight": weight}
    if as_kwargs:
        # Only the parameters are positional: the gradients checked are the critic's.
        return case(params, real=real, fake=fake, alpha=alpha, **kwargs)
    return case(params, real, fake, alpha, **kwargs)


def critic_case(d):
    b, dim = d.size(1, 10), d.size(1, 8)
    return case(critic_params(d, dim), d.tensor((b, dim), low=-2, high=2))


def closed_form_penalty(c):
    """The penalty from the critic's gradient written out by hand, in float64:
    grad_x f = ((1 - tanh(z)^2) * w2) @ w1 with z = x @ w1.T + b1."""
    params, real, fake, alpha = c.args
    weight = c.kwargs.get("weight", 10.0)
    p = {k: v.double() for k, v in params.items()}
    a = alpha.double()[:, None]
    x = a * real.double() + (1 - a) * fake.double()
    h = torch.tanh(x @ p["w1"].T + p["b1"])
    grad = ((1 - h**2) * p["w2"]) @ p["w1"]
    norms = torch.sqrt((grad**2).sum(dim=1))
    return (weight * ((norms - 1) ** 2).mean()).to(real.dtype)


def trusted_critic(c):
    params, x = c.args
    p = {k: v.double() for k, v in params.items()}
    h = torch.tanh(x.double() @ p["w1"].T + p["b1"])
    return (h @ p["w2"] + p["b2"]).to(x.dtype)


def scalar(value, where):
    if not isinstance(value, torch.Tensor) or value.dim() != 0:
        fail(f"{where}: expected a 0-d tensor, got {type(value).__name__}")
    return value


def d_loss_splits(sol, c):
    """discriminator_loss(r, f) = generator_loss(r) + generator_loss(-f)."""
    real, fake = c.args
    whole = scalar(sol.call("discriminator_loss", real, fake), "discriminator loss")
    parts = scalar(sol.call("generator_loss", real), "generator loss") + scalar(
        sol.call("generator_loss", -fake), "generator loss"
    )
    expect_close(whole, parts, "D loss against G loss(real) + G loss(-fake)")


def generator_gradient_does_not_vanish(sol, c):
    """d/df mean(-log sigmoid(f)) = -sigmoid(-f) / n: close to -1/n where D rejects the fake
    with confidence (f = -100), the non-saturating loss's point."""
    (fake,) = c.args
    _, grads = sol.vjp("generator_loss", (fake,), torch.ones((), dtype=fake.dtype))
    want = -torch.sigmoid(-fake.double()) / fake.numel()
    expect_close(grads[0], want.to(fake.dtype), "gradient of the generator loss")


def order_does_not_matter(sol, c):
    params, real, fake, alpha = c.args
    order = torch.randperm(real.shape[0])
    a = scalar(sol.call("gradient_penalty", params, real, fake, alpha), "penalty")
    b = scalar(
        sol.call("gradient_penalty", params, real[order], fake[order], alpha[order]),
        "penalty of the shuffled batch",
    )
    expect_close(b, a, "penalty with the pairs shuffled")


def alpha_one_ignores_fake(sol, c):
    """With alpha = 1 the points are the real samples: the fake ones do not matter."""
    params, real, fake, _ = c.args
    ones = torch.ones(real.shape[0], dtype=real.dtype)
    a = scalar(sol.call("gradient_penalty", params, real, fake, ones), "penalty")
    b = scalar(sol.call("gradient_penalty", params, real, fake * 3 + 1, ones), "penalty")
    expect_close(b, a, "penalty at alpha = 1 with other fakes")


def weight_is_linear(sol, c):
    params, real, fake, alpha = c.args
    one = scalar(sol.call("gradient_penalty", params, real, fake, alpha, weight=1.0), "penalty")
    ten = scalar(sol.call("gradient_penalty", params, real, fake, alpha), "penalty")
    expect_close(ten, 10 * one, "the default weight is 10", scale=10)


def penalty_trains_the_critic(sol, c):
    """The penalty's gradient w.r.t. w2 is not zero: the gradient must be built with
    create_graph=True for the penalty to reach the critic's weights."""
    params, real, fake, alpha = c.args
    _, grads = sol.vjp(
        "gradient_penalty", (params, real, fake, alpha), torch.ones((), dtype=real.dtype)
    )
    g = grads[0]
    if not isinstance(g, dict) or g.get("w2") is None:
        fail("no gradient reached the critic's parameters")
    if float(g["w2"].abs().max()) == 0.0:
        fail("the penalty's gradient with respect to w2 is zero")


def timing_case(d):
    """64 pairs of 32 features, a critic with 64 hidden units."""
    params = critic_params(d, 32, hidden=64)
    real, fake = d.tensor((64, 32)), d.tensor((64, 32))
    return case(params, real, fake, d.tensor((64,), low=0, high=1))


DECLARATIONS = [
    values(
        "the discriminator's loss",
        "discriminator_loss",
        loss_case,
        visible=True,
        expect=trusted_d,
        description="real and fake logits of their own shapes",
    ),
    values("the generator's loss", "generator_loss", one_set, visible=True, expect=trusted_g),
    values(
        "the critic's scores",
        "critic",
        critic_case,
        visible=True,
        expect=trusted_critic,
        dtypes=("float32", "float64"),
    ),
    values(
        "the gradient penalty",
        "gradient_penalty",
        penalty_case,
        visible=True,
        expect=closed_form_penalty,
        description="default weight 10",
    ),
    values(
        "losses in float64",
        "discriminator_loss",
        loss_case,
        cases=3,
        dtypes=("float64",),
        expect=trusted_d,
    ),
    values(
        "generator loss, float32 and float64",
        "generator_loss",
        one_set,
        cases=3,
        dtypes=("float32", "float64"),
        expect=trusted_g,
    ),
    values(
        "penalties of drawn sizes and weights",
        "gradient_penalty",
        lambda d: penalty_case(d, weight=d.choice([1.0, 2.5])),
        cases=5,
        dtypes=("float32", "float64"),
        expect=closed_form_penalty,
    ),
    shapes(
        "losses are 0-d tensors", "discriminator_loss", loss_case, dtypes=("float32", "float64")
    ),
    shapes(
        "the penalty is a 0-d tensor",
        "gradient_penalty",
        penalty_case,
        dtypes=("float32", "float64"),
    ),
    gradients(
        "the penalty's gradients w.r.t. w1, b1, w2, b2",
        "gradient_penalty",
        lambda d: penalty_case(d, as_kwargs=True),
        cases=4,
    ),
    gradients(
        "the penalty's gradients at alpha 0 and 1",
        "gradient_penalty",
        lambda d: penalty_case(
            d,
            as_kwargs=True,
            weight=1.0,
            alpha=lambda b: torch.tensor(
                [d.choice([0.0, 1.0]) for _ in range(b)], dtype=torch.float64
            ),
        ),
        cases=2,
    ),
    gradients("gradients of the discriminator's loss", "discriminator_loss", loss_case, cases=2),
    gradients("gradients of the generator's loss", "generator_loss", one_set, cases=2),
    gradients("gradients of the critic", "critic", critic_case, cases=2),
    prop("D loss = G loss(real) + G loss(-fake)", d_loss_splits, loss_case, cases=3),
    prop(
        "the generator's gradient does not vanish",
        generator_gradient_does_not_vanish,
        one_saturated,
        cases=3,
    ),
    prop(
        "the penalty trains the critic",
        penalty_trains_the_critic,
        penalty_case,
        cases=2,
        dtypes=("float64",),
    ),
    prop(
        "the pairs' order does not matter",
        order_does_not_matter,
        lambda d: penalty_case(d, b=d.size(2, 10)),
        cases=2,
    ),
    prop("alpha = 1 ignores the fakes", alpha_one_ignores_fake, penalty_case, cases=2),
    prop("the weight scales the penalty", weight_is_linear, penalty_case, cases=2),
    edge(
        "logits of +-100 and +-1000, discriminator",
        "discriminator_loss",
        saturated,
        expect=trusted_d,
        visible=True,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    edge(
        "saturated logits of both kinds, float64",
        "discriminator_loss",
        saturated,
        expect=trusted_d,
        cases=3,
        dtypes=("float64",),
    ),
    edge(
        "logits of +-100 and +-1000, generator",
        "generator_loss",
        one_saturated,
        expect=trusted_g,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    edge(
        "a single pair, a single feature",
        "gradient_penalty",
        lambda d: penalty_case(d, b=1, dim=1),
        expect=closed_form_penalty,
        cases=2,
        dtypes=("float32", "float64"),
    ),
    edge(
        "alpha exactly 0 or 1",
        "gradient_penalty",
        lambda d: penalty_case(
            d, alpha=lambda b: torch.tensor([d.choice([0.0, 1.0]) for _ in range(b)], dtype=d.dtype)
        ),
        expect=closed_form_penalty,
        cases=2,
    ),
    nontrivial("the penalty is not zero", "gradient_penalty", penalty_case),
    performance(
        "time against the reference",
        "gradient_penalty",
        timing_case,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
    api_rule(
        "computes the losses itself", visible=True, description="no built-in binary cross-entropy"
    ),
]
