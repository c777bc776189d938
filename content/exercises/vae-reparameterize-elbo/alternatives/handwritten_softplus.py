# Style: softplus written by hand as max(l, 0) + log1p(exp(-|l|)), per-sample sums then a
# batch mean, sigma via sqrt(exp(logvar)); __all__.
import torch

__all__ = ["reparameterize", "vae_loss"]


def reparameterize(mu, logvar, eps):
    return torch.addcmul(mu, logvar.exp().sqrt(), eps)


def _bce_from_logits(logits, target):
    return logits.clamp(min=0) - logits * target + torch.log1p(torch.exp(-logits.abs()))


def vae_loss(recon_logits, x, mu, logvar, beta=1.0):
    per_sample_recon = _bce_from_logits(recon_logits, x).flatten(1).sum(dim=1)
    per_sample_kl = -0.5 * torch.sum(1 + logvar - mu**2 - logvar.exp(), dim=1)
    recon = per_sample_recon.mean()
    kl = per_sample_kl.mean()
    return recon + beta * kl, recon, kl
