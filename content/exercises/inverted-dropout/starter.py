import torch


def dropout(
    x: torch.Tensor,
    p: float,
    training: bool = True,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """x: any shape. Returns a new tensor of x's shape and dtype: in training, each element
    zeroed with probability p and the rest scaled by 1 / (1 - p); in eval, x unchanged."""
    raise NotImplementedError
