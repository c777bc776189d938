import torch


class BatchNorm2d:
    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1) -> None:
        """weight (C,) ones, bias (C,) zeros, running_mean (C,) zeros, running_var (C,) ones,
        training True."""
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, C, H, W). Training: batch statistics, and update the running ones.
        Eval: the running statistics, nothing updated. Returns (N, C, H, W)."""
        raise NotImplementedError
