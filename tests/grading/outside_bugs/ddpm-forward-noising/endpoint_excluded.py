# Bug: The schedule uses beta_start + (beta_end - beta_start) * i / T, so beta_end is never reached (the last beta is one step short of it); a correct version spaces the T values with both ends included.
import torch


def linear_beta_schedule(num_steps, beta_start=1e-4, beta_end=0.02):
    # Both ends included, in float64: the cumulative product over ~1000 steps is
    # sensitive to rounding, so the schedule is kept at full precision.
    i = torch.arange(num_steps, dtype=torch.float64)
    return beta_start + (beta_end - beta_start) * i / num_steps


def alpha_bars(betas):
    # alpha_bar_t = prod_{s <= t} (1 - beta_s): the fraction of the signal's variance left
    # after t + 1 noising steps.
    return torch.cumprod(1.0 - betas, dim=0)


def q_sample(x0, t, noise, alpha_bars):
    # One schedule entry per sample, reshaped to (B, 1, ..., 1) so it broadcasts over
    # every feature dimension of x0, whatever its rank.
    ab = alpha_bars[t].reshape(-1, *([1] * (x0.dim() - 1)))
    signal = ab.sqrt().to(x0.dtype)
    sigma = (1.0 - ab).sqrt().to(x0.dtype)
    # x_t = sqrt(ab_t) x0 + sqrt(1 - ab_t) eps: the closed form of t + 1 Gaussian steps.
    return signal * x0 + sigma * noise
