import torch


def linear_beta_schedule(
    num_steps: int, beta_start: float = 1e-4, beta_end: float = 0.02
) -> torch.Tensor:
    """(num_steps,) float64 betas, evenly spaced from beta_start to beta_end, both included."""
    raise NotImplementedError


def alpha_bars(betas: torch.Tensor) -> torch.Tensor:
    """betas: (T,). Returns (T,) in betas' dtype: alpha_bar[t] = prod_{s<=t} (1 - betas[s])."""
    raise NotImplementedError


def q_sample(
    x0: torch.Tensor, t: torch.Tensor, noise: torch.Tensor, alpha_bars: torch.Tensor
) -> torch.Tensor:
    """x0: (B, ...) clean samples; t: (B,) int64 steps in [0, T); noise: like x0;
    alpha_bars: (T,) float64. Returns x_t, shaped like x0, in x0's dtype."""
    raise NotImplementedError
