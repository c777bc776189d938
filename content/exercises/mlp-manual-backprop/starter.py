import torch


def forward(params: dict[str, torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """x: (N, D); params w1 (H, D), b1 (H,), w2 (O, H), b2 (O,). Returns pred (N, O)."""
    raise NotImplementedError


def loss_and_grads(
    params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """x: (N, D), y: (N, O). Returns (mean squared error as a 0-d tensor,
    {"w1": (H, D), "b1": (H,), "w2": (O, H), "b2": (O,)} gradients of it)."""
    raise NotImplementedError


def sgd_step(
    params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor], lr: float
) -> dict[str, torch.Tensor]:
    """A new dict: every p - lr * g, same keys and shapes; the inputs stay unchanged."""
    raise NotImplementedError
