# Style: log-sigmoid of l and of -l, targets and logits flattened to (B, -1), sums divided by B.
import torch
import torch.nn.functional as F


def reparameterize(mu, logvar, eps):
    std = torch.exp(0.5 * logvar)
    return mu + std * eps


def vae_loss(recon_logits, x, mu, logvar, beta=1.0):
    B = recon_logits.shape[0]
    l = recon_logits.reshape(B, -1)
    y = x.reshape(B, -1)
    # log sigmoid(l) and log(1 - sigmoid(l)) = log sigmoid(-l), each computed stably.
    nll = -(y * F.logsigmoid(l) + (1 - y) * F.logsigmoid(-l))
    recon = nll.sum() / B
    kl = 0.5 * (mu.pow(2) + logvar.exp() - 1 - logvar)
    kl = kl.sum() / B
    return recon + beta * kl, recon, kl
