# Bug: The reconstruction term is written with the max trick, relu(l) - x * l + log1p(exp(-|l|)), which is finite but whose autograd gradient at a logit of exactly 0 is -x / B instead of (0.5 - x) / B; a correct version uses softplus (or log-sigmoid), smooth at 0.
import torch
import torch.nn.functional as F


def reparameterize(mu, logvar, eps):
    # z = mu + sigma * eps with sigma = exp(logvar / 2): the noise is an input, so z is a
    # differentiable function of mu and logvar and gradients reach the encoder.
    return mu + torch.exp(0.5 * logvar) * eps


def vae_loss(recon_logits, x, mu, logvar, beta=1.0):
    batch = recon_logits.shape[0]
    # -log p(x | z) for Bernoulli pixels with logit l: softplus(l) - x * l. softplus never
    # exponentiates a large positive number, so logits of +-100 stay finite, where
    # log(sigmoid(l)) and log(1 - sigmoid(l)) give log(0) = -inf.
    recon = (torch.relu(recon_logits) - x * recon_logits + torch.log1p(torch.exp(-recon_logits.abs()))).sum() / batch
    # KL(N(mu, sigma^2) || N(0, 1)) per latent dimension, in closed form, summed over them.
    kl = 0.5 * (mu.pow(2) + logvar.exp() - 1.0 - logvar).sum() / batch
    return recon + beta * kl, recon, kl
