# Style: the two log-probabilities through torch.logaddexp, everything in float64 inside and
# cast back; a __main__ self-test.
import torch


def reparameterize(mu, logvar, eps):
    std = torch.exp(logvar.double() / 2)
    return (mu.double() + std * eps.double()).to(mu.dtype)


def vae_loss(recon_logits, x, mu, logvar, beta=1.0):
    dtype = recon_logits.dtype
    s, t = recon_logits.double(), x.double()
    zero = torch.zeros_like(s)
    log_p = -torch.logaddexp(zero, -s)  # log sigmoid(l)
    log_not_p = -torch.logaddexp(zero, s)  # log (1 - sigmoid(l))
    b = s.shape[0]
    recon = -(t * log_p + (1 - t) * log_not_p).sum() / b
    m, lv = mu.double(), logvar.double()
    kl = (m * m + torch.exp(lv) - 1 - lv).sum() / (2 * b)
    loss = recon + beta * kl
    return loss.to(dtype), recon.to(dtype), kl.to(dtype)


if __name__ == "__main__":
    logits = torch.tensor([[100.0, -100.0]])
    loss, recon, kl = vae_loss(
        logits, torch.tensor([[0.0, 1.0]]), torch.zeros(1, 2), torch.zeros(1, 2)
    )
    assert torch.isfinite(loss) and abs(recon.item() - 200.0) < 1e-4 and kl.item() == 0.0
    print(loss, recon, kl)
