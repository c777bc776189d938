import torch


def predict_x0(
    x_t: torch.Tensor, t: torch.Tensor, eps_pred: torch.Tensor, alpha_bars: torch.Tensor
) -> torch.Tensor:
    """x_t, eps_pred: (B, ...); t: (B,) int64; alpha_bars: (T,) float64.
    Returns the estimate of x0, shaped like x_t, in x_t's dtype."""
    raise NotImplementedError


def p_sample_step(
    x_t: torch.Tensor,
    t: torch.Tensor,
    eps_pred: torch.Tensor,
    betas: torch.Tensor,
    noise: torch.Tensor,
    variance: str = "beta",
    clip_denoised: bool = False,
) -> torch.Tensor:
    """x_t, eps_pred, noise: (B, ...); t: (B,) int64 in [0, T); betas: (T,) float64.
    Returns x_{t-1}, shaped like x_t, in x_t's dtype."""
    raise NotImplementedError
