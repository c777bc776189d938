import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Softmax of `x` along `dim`.

    x: a floating tensor of any shape, e.g. (batch, classes).
    Returns a tensor of the same shape and dtype whose entries along `dim` are
    non-negative and sum to 1. Must not overflow for large logits.
    """
    raise NotImplementedError


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Log of the softmax of `x` along `dim`, same shape and dtype as `x`.

    Stays finite for every finite input (never log(0)).
    """
    raise NotImplementedError
