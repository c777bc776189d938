# Style: the mean always from the posterior's x0 form (clamped only when asked), the noise
# mask with torch.where, coefficients gathered by a helper class; __all__.
import torch

__all__ = ["p_sample_step", "predict_x0"]


class _Coefficients:
    """Per-step float64 vectors of a schedule, gathered per sample on demand."""

    def __init__(self, betas: torch.Tensor):
        self.betas = betas
        self.alphas = 1 - betas
        self.bars = torch.cumprod(self.alphas, 0)
        self.prev = torch.cat([torch.ones_like(self.bars[:1]), self.bars[:-1]])

    @staticmethod
    def take(vec: torch.Tensor, t: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
        return vec.index_select(0, t).view(t.shape[0], *(1,) * (like.ndim - 1)).to(like.dtype)


def predict_x0(x_t, t, eps_pred, alpha_bars):
    sqrt_recip = _Coefficients.take(alpha_bars.rsqrt(), t, x_t)
    sqrt_recip_m1 = _Coefficients.take((1 / alpha_bars - 1).sqrt(), t, x_t)
    return sqrt_recip * x_t - sqrt_recip_m1 * eps_pred


def p_sample_step(x_t, t, eps_pred, betas, noise, variance="beta", clip_denoised=False):
    k = _Coefficients(betas)
    x0 = predict_x0(x_t, t, eps_pred, k.bars)
    if clip_denoised:
        x0 = x0.clamp(-1, 1)
    c0 = k.take(k.prev.sqrt() * k.betas / (1 - k.bars), t, x_t)
    ct = k.take(k.alphas.sqrt() * (1 - k.prev) / (1 - k.bars), t, x_t)
    mean = c0 * x0 + ct * x_t
    var = k.betas if variance == "beta" else k.betas * (1 - k.prev) / (1 - k.bars)
    sigma = k.take(var.sqrt(), t, x_t)
    last = (t == 0).view(t.shape[0], *(1,) * (x_t.ndim - 1))
    return torch.where(last, mean, mean + sigma * noise)
