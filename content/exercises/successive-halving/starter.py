import math

import torch


def successive_halving(losses: torch.Tensor, eta: int = 3) -> tuple[list[list[int]], int]:
    """losses: (n_configs, n_rungs), losses[c, r] the loss of config c trained with budget r.
    Returns (the configs evaluated at each rung, ranked best first; the winner)."""
    raise NotImplementedError


def log_uniform(u: torch.Tensor, low: float, high: float) -> torch.Tensor:
    """u: uniforms in [0, 1), any shape. Samples log-uniform in [low, high), same shape."""
    raise NotImplementedError
