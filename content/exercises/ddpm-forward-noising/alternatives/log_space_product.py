# Style: alpha_bar as exp(cumsum(log1p(-beta))), the schedule built from arange, view-based
# broadcasting through a helper; __all__.
import torch

__all__ = ["alpha_bars", "linear_beta_schedule", "q_sample"]


def linear_beta_schedule(num_steps: int, beta_start: float = 1e-4, beta_end: float = 0.02):
    i = torch.arange(num_steps, dtype=torch.float64)
    return beta_start + (beta_end - beta_start) * i / max(num_steps - 1, 1)


def alpha_bars(betas: torch.Tensor) -> torch.Tensor:
    # a product of positives is the exp of a sum of logs; log1p keeps small betas accurate
    return torch.exp(torch.cumsum(torch.log1p(-betas), dim=0))


def _per_sample(values: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return values.view(values.shape[0], *(1,) * (like.dim() - 1)).to(like.dtype)


def q_sample(x0, t, noise, alpha_bars):
    ab = alpha_bars.index_select(0, t)
    return _per_sample(ab.sqrt(), x0) * x0 + _per_sample(torch.sqrt(1 - ab), x0) * noise
