# Style: torch.func: the per-sample input gradient as vmap(grad(critic of one point)),
# which stays differentiable in the weights; losses through softplus with labels as signs.
import torch
import torch.nn.functional as F
from torch.func import grad, vmap


def _bce(logits, label):
    # label 1: softplus(-z); label 0: softplus(z)
    sign = 1.0 - 2.0 * label
    return F.softplus(sign * logits).mean()


def discriminator_loss(real_logits, fake_logits):
    return _bce(real_logits, 1.0) + _bce(fake_logits, 0.0)


def generator_loss(fake_logits):
    return _bce(fake_logits, 1.0)


def critic(params, x):
    return torch.tanh(x @ params["w1"].T + params["b1"]) @ params["w2"] + params["b2"]


def gradient_penalty(params, real, fake, alpha, weight=10.0):
    x_hat = alpha[:, None] * real + (1 - alpha[:, None]) * fake

    def score(point):
        return critic(params, point[None]).squeeze(0)

    per_sample = vmap(grad(score))(x_hat)
    norms = per_sample.pow(2).sum(-1).sqrt()
    return (norms - 1).pow(2).mean() * weight
