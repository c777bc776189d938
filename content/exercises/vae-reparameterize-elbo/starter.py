import torch
import torch.nn.functional as F  # noqa: F401  (F.softplus is allowed)


def reparameterize(mu: torch.Tensor, logvar: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """mu, logvar, eps: (B, Z). Returns z = mu + exp(logvar / 2) * eps, (B, Z)."""
    raise NotImplementedError


def vae_loss(
    recon_logits: torch.Tensor,
    x: torch.Tensor,
    mu: torch.Tensor,
    logvar: torch.Tensor,
    beta: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """recon_logits, x: (B, ...) of one shape, x in [0, 1]; mu, logvar: (B, Z).

    Returns (loss, recon, kl), three 0-d tensors in the inputs' dtype: recon and kl are
    summed over each sample's elements and averaged over the batch; loss = recon + beta * kl.
    """
    raise NotImplementedError
