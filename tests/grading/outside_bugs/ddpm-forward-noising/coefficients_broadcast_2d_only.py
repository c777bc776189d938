# Bug: The per-sample coefficients are reshaped with [:, None], which is right only for 2-D x0: a (B,) batch broadcasts to (B, B) and a (B, C, H, W) batch misaligns; a correct version reshapes to (B, 1, ..., 1) for x0's rank.
import torch


def linear_beta_schedule(num_steps, beta_start=1e-4, beta_end=0.02):
    # Both ends included, in float64: the cumulative product over ~1000 steps is
    # sensitive to rounding, so the schedule is kept at full precision.
    return torch.linspace(beta_start, beta_end, num_steps, dtype=torch.float64)


def alpha_bars(betas):
    # alpha_bar_t = prod_{s <= t} (1 - beta_s): the fraction of the signal's variance left
    # after t + 1 noising steps.
    return torch.cumprod(1.0 - betas, dim=0)


def q_sample(x0, t, noise, alpha_bars):
    # One schedule entry per sample, reshaped to (B, 1, ..., 1) so it broadcasts over
    # every feature dimension of x0, whatever its rank.
    ab = alpha_bars[t][:, None]
    signal = ab.sqrt().to(x0.dtype)
    sigma = (1.0 - ab).sqrt().to(x0.dtype)
    # x_t = sqrt(ab_t) x0 + sqrt(1 - ab_t) eps: the closed form of t + 1 Gaussian steps.
    return signal * x0 + sigma * noise
