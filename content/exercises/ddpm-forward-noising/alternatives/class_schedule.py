# Style: a small schedule class holding the precomputed square roots (as a training loop
# would), with the three functions as thin wrappers; torch.lerp for the schedule.
import torch


class _NoiseSchedule:
    def __init__(self, bars: torch.Tensor):
        self.sqrt_ab = torch.sqrt(bars)
        self.sqrt_one_minus_ab = torch.sqrt(1.0 - bars)

    def coefficients(self, t: torch.Tensor, like: torch.Tensor):
        shape = (-1,) + (1,) * (like.ndim - 1)
        a = self.sqrt_ab.gather(0, t).reshape(shape).to(like.dtype)
        s = self.sqrt_one_minus_ab.gather(0, t).reshape(shape).to(like.dtype)
        return a, s


def linear_beta_schedule(num_steps, beta_start=1e-4, beta_end=0.02):
    start = torch.full((num_steps,), beta_start, dtype=torch.float64)
    end = torch.full((num_steps,), beta_end, dtype=torch.float64)
    weight = torch.linspace(0.0, 1.0, num_steps, dtype=torch.float64)
    if num_steps == 1:
        weight = torch.zeros(1, dtype=torch.float64)
    return torch.lerp(start, end, weight)


def alpha_bars(betas):
    return (1 - betas).cumprod(0)


def q_sample(x0, t, noise, alpha_bars):
    a, s = _NoiseSchedule(alpha_bars).coefficients(t, x0)
    return torch.addcmul(a * x0, s, noise)
