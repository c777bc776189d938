# Style: a loop over the samples accumulating the two terms, the KL's squares with einsum,
# F.softplus for -log(1 - p) and -log p.
import torch
import torch.nn.functional as F


def reparameterize(mu: torch.Tensor, logvar: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    sigma = torch.exp(logvar * 0.5)
    return mu + sigma * eps


def vae_loss(recon_logits, x, mu, logvar, beta=1.0):
    b = recon_logits.shape[0]
    recon = recon_logits.new_zeros(())
    kl = recon_logits.new_zeros(())
    for i in range(b):
        z, t = recon_logits[i], x[i]
        # -log p = softplus(-z), -log(1 - p) = softplus(z)
        recon = recon + (t * F.softplus(-z) + (1 - t) * F.softplus(z)).sum()
        m, lv = mu[i], logvar[i]
        kl = kl + 0.5 * (torch.einsum("z,z->", m, m) + lv.exp().sum() - lv.numel() - lv.sum())
    recon, kl = recon / b, kl / b
    return recon + beta * kl, recon, kl
