# Bug: The gradient's norm is taken over the whole (B, D) batch at once instead of per sample, so the penalty is (||G||_F - 1)^2 rather than the mean of each sample's (||g_b|| - 1)^2; a correct version takes the norm along dim 1.
import torch
import torch.nn.functional as F


def discriminator_loss(real_logits, fake_logits):
    # BCE with label 1 on real and 0 on fake: -log sigmoid(r) = softplus(-r) and
    # -log(1 - sigmoid(f)) = softplus(f), finite for logits of any size.
    return F.softplus(-real_logits).mean() + F.softplus(fake_logits).mean()


def generator_loss(fake_logits):
    # Non-saturating: maximise log D(G(z)) rather than minimise log(1 - D(G(z))), whose
    # gradient vanishes exactly when the discriminator wins (early in training).
    return F.softplus(-fake_logits).mean()


def critic(params, x):
    h = torch.tanh(x @ params["w1"].T + params["b1"])
    return h @ params["w2"] + params["b2"]


def gradient_penalty(params, real, fake, alpha, weight=10.0):
    # One random point per pair on the segment between a real and a fake sample.
    a = alpha.reshape(-1, 1)
    x_hat = a * real + (1.0 - a) * fake
    x_hat.requires_grad_(True)
    # Summing the scores gives every sample its own gradient (samples do not interact).
    # create_graph=True keeps the gradient differentiable, so the penalty trains the critic.
    (grad,) = torch.autograd.grad(critic(params, x_hat).sum(), x_hat, create_graph=True)
    norms = grad.norm(2)
    return weight * ((norms - 1.0) ** 2).mean()
