import torch
import torch.nn.functional as F  # noqa: F401  (F.softplus and F.logsigmoid are allowed)


def discriminator_loss(real_logits: torch.Tensor, fake_logits: torch.Tensor) -> torch.Tensor:
    """Logits of any shapes. Returns a 0-d tensor: mean BCE of real (label 1) plus mean BCE of
    fake (label 0)."""
    raise NotImplementedError


def generator_loss(fake_logits: torch.Tensor) -> torch.Tensor:
    """Logits of any shape. Returns a 0-d tensor: the mean of -log sigmoid(fake_logits)."""
    raise NotImplementedError


def critic(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """x: (B, D). params: w1 (H, D), b1 (H,), w2 (H,), b2 0-d. Returns (B,) scores."""
    raise NotImplementedError


def gradient_penalty(
    params: dict[str, torch.Tensor],
    real: torch.Tensor,
    fake: torch.Tensor,
    alpha: torch.Tensor,
    weight: float = 10.0,
) -> torch.Tensor:
    """real, fake: (B, D); alpha: (B,) in [0, 1]. Returns the 0-d penalty
    weight * mean_b (||grad_x critic(x_hat_b)||_2 - 1)^2, differentiable in params."""
    raise NotImplementedError
