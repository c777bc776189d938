# Style: coefficients in log space (exp of sums of logs, as sampler code caches them),
# the t = 0 rule folded into sigma, addcmul for the noise.
import torch


def _gather(vec, t, like):
    return vec[t].reshape((-1,) + (1,) * (like.dim() - 1)).to(like.dtype)


def predict_x0(x_t, t, eps_pred, alpha_bars):
    log_ab = alpha_bars.log()
    inv_sqrt_ab = torch.exp(-0.5 * log_ab)
    ratio = torch.exp(0.5 * (torch.log1p(-alpha_bars) - log_ab))
    return _gather(inv_sqrt_ab, t, x_t) * x_t - _gather(ratio, t, x_t) * eps_pred


def p_sample_step(x_t, t, eps_pred, betas, noise, variance="beta", clip_denoised=False):
    log_alphas = torch.log1p(-betas)
    log_ab = torch.cumsum(log_alphas, 0)
    ab = log_ab.exp()
    ab_prev = torch.exp(torch.cat([log_ab.new_zeros(1), log_ab[:-1]]))
    one_minus_ab = -torch.expm1(log_ab)
    if clip_denoised:
        x0 = predict_x0(x_t, t, eps_pred, ab).clamp(min=-1, max=1)
        mean = _gather(ab_prev.sqrt() * betas / one_minus_ab, t, x_t) * x0
        mean = mean + _gather((0.5 * log_alphas).exp() * (1 - ab_prev) / one_minus_ab, t, x_t) * x_t
    else:
        scaled = x_t - _gather(betas * one_minus_ab.rsqrt(), t, x_t) * eps_pred
        mean = scaled * _gather(torch.exp(-0.5 * log_alphas), t, x_t)
    if variance == "posterior":
        log_var = torch.log(betas) + torch.log1p(-ab_prev) - torch.log(one_minus_ab)
    else:
        log_var = torch.log(betas)
    # posterior: log(1 - ab_prev) is -inf at t = 0, so sigma_0 is 0 there; masked anyway
    active = (t > 0).reshape((-1,) + (1,) * (x_t.dim() - 1)).to(x_t.dtype)
    sigma = _gather(torch.exp(0.5 * log_var), t, x_t) * active
    return torch.addcmul(mean, sigma, noise)
