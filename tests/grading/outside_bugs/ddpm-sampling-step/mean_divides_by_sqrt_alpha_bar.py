# Bug: The eps-form mean divides by sqrt(alpha_bar_t) instead of sqrt(alpha_t), mixing up the one-step and the cumulative signal scale; a correct version rescales by 1 / sqrt(1 - beta_t).
import torch


def _at(coef, t, like):
    # One schedule entry per sample, shaped (B, 1, ..., 1) to broadcast over its features,
    # cast to the data's dtype only after it was computed in the schedule's float64.
    return coef[t].reshape(-1, *([1] * (like.dim() - 1))).to(like.dtype)


def predict_x0(x_t, t, eps_pred, alpha_bars):
    # Invert x_t = sqrt(ab) x0 + sqrt(1 - ab) eps for x0, with eps replaced by its prediction.
    sqrt_ab = _at(alpha_bars.sqrt(), t, x_t)
    sqrt_one_minus_ab = _at((1.0 - alpha_bars).sqrt(), t, x_t)
    return (x_t - sqrt_one_minus_ab * eps_pred) / sqrt_ab


def p_sample_step(x_t, t, eps_pred, betas, noise, variance="beta", clip_denoised=False):
    alphas = 1.0 - betas
    ab = torch.cumprod(alphas, dim=0)
    # alpha_bar_{t-1}, with alpha_bar_{-1} = 1: before the first step nothing is noised.
    ab_prev = torch.cat([ab.new_ones(1), ab[:-1]])
    if clip_denoised:
        # Mean of q(x_{t-1} | x_t, x0) at the clipped estimate of x0: the two weights are
        # the posterior's, so data known to lie in [-1, 1] never drifts out of it.
        x0 = predict_x0(x_t, t, eps_pred, ab).clamp(-1.0, 1.0)
        coef_x0 = _at(ab_prev.sqrt() * betas / (1.0 - ab), t, x_t)
        coef_xt = _at(alphas.sqrt() * (1.0 - ab_prev) / (1.0 - ab), t, x_t)
        mean = coef_x0 * x0 + coef_xt * x_t
    else:
        # The same mean written with eps: remove the predicted noise's share, rescale.
        eps_coef = _at(betas / (1.0 - ab).sqrt(), t, x_t)
        mean = (x_t - eps_coef * eps_pred) / _at(ab.sqrt(), t, x_t)
    if variance == "beta":
        var = betas
    elif variance == "posterior":
        var = betas * (1.0 - ab_prev) / (1.0 - ab)
    else:
        raise ValueError(f"unknown variance {variance!r}")
    # No noise at the last reverse step (t = 0): its output is the sample itself.
    keep = (t > 0).reshape(-1, *([1] * (x_t.dim() - 1))).to(x_t.dtype)
    return mean + keep * _at(var.sqrt(), t, x_t) * noise
