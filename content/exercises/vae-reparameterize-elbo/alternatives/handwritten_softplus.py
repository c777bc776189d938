# Style: softplus written by hand, one stable branch per sign of l, per-sample sums then a
# batch mean, sigma via sqrt(exp(logvar)); __all__.
import torch

__all__ = ["reparameterize", "vae_loss"]


def reparameterize(mu, logvar, eps):
    return torch.addcmul(mu, logvar.exp().sqrt(), eps)


def _softplus(logits):
    # log(1 + e^l) by branch: l + log1p(e^-l) where l >= 0, log1p(e^l) below. Each branch sees
    # only its own side (the other side replaced by 0), so neither overflows, the gradient is
    # finite, and at l = 0 it is sigmoid(0) = 1/2 (max(l, 0) + log1p(exp(-|l|)) gives 0 there).
    pos = logits >= 0
    upper = torch.where(pos, logits, torch.zeros_like(logits))
    lower = torch.where(pos, torch.zeros_like(logits), logits)
    return torch.where(pos, upper + torch.log1p(torch.exp(-upper)), torch.log1p(torch.exp(lower)))


def _bce_from_logits(logits, target):
    return _softplus(logits) - logits * target


def vae_loss(recon_logits, x, mu, logvar, beta=1.0):
    per_sample_recon = _bce_from_logits(recon_logits, x).flatten(1).sum(dim=1)
    per_sample_kl = -0.5 * torch.sum(1 + logvar - mu**2 - logvar.exp(), dim=1)
    recon = per_sample_recon.mean()
    kl = per_sample_kl.mean()
    return recon + beta * kl, recon, kl
