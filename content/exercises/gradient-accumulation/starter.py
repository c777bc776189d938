import torch
import torch.nn.functional as F


def model(params, x):
    """Given. params = [w1 (H, D), b1 (H,), w2 (C, H), b2 (C,)]; x (B, D) -> logits (B, C)."""
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def accumulated_grads(
    params: list[torch.Tensor], micro_batches: list[tuple[torch.Tensor, torch.Tensor]]
) -> list[torch.Tensor]:
    """The gradient of the mean cross-entropy over every example of every micro-batch, one
    tensor per parameter (same shapes as params), with one backward per micro-batch."""
    raise NotImplementedError


def train(
    params: list[torch.Tensor],
    batches: list[list[tuple[torch.Tensor, torch.Tensor]]],
    lr: float,
    momentum: float,
) -> list[list[torch.Tensor]]:
    """One SGD step per entry of batches (each a list of micro-batches); the parameters after
    each step."""
    raise NotImplementedError
