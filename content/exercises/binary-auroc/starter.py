import torch


def auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """scores: (N,) float32 or float64; labels: (N,) int64, each 0 or 1.

    Returns a 0-d float64 tensor: the probability that a random positive scores above a
    random negative, a tie counting one half; NaN when either class is missing.
    """
    raise NotImplementedError
