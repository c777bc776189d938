# Style: everything computed in float64 and cast back once; a per-sample gather helper; the t = 0 step masked by multiplying the noise by (t != 0).
import torch


def _per_sample(values, t, like):
    # values: (T,) schedule; pick one entry per sample, shaped (B, 1, ..., 1), float64.
    v = values.to(torch.float64)[t]
    return v.view(v.shape[0], *([1] * (like.dim() - 1)))


def predict_x0(x_t, t, eps_pred, alpha_bars):
    ab = _per_sample(alpha_bars, t, x_t)
    x = x_t.to(torch.float64)
    e = eps_pred.to(torch.float64)
    return ((x - torch.sqrt(1 - ab) * e) / torch.sqrt(ab)).to(x_t.dtype)


def p_sample_step(x_t, t, eps_pred, betas, noise, variance="beta", clip_denoised=False):
    betas = betas.to(torch.float64)
    alphas = 1 - betas
    abar = torch.cumprod(alphas, 0)
    abar_prev = torch.cat([abar.new_ones(1), abar[:-1]])

    b = _per_sample(betas, t, x_t)
    a = _per_sample(alphas, t, x_t)
    ab = _per_sample(abar, t, x_t)
    abp = _per_sample(abar_prev, t, x_t)

    x = x_t.to(torch.float64)
    e = eps_pred.to(torch.float64)
    if clip_denoised:
        x0 = ((x - torch.sqrt(1 - ab) * e) / torch.sqrt(ab)).clamp(-1, 1)
        mean = (torch.sqrt(abp) * b / (1 - ab)) * x0 + (torch.sqrt(a) * (1 - abp) / (1 - ab)) * x
    else:
        mean = (x - b / torch.sqrt(1 - ab) * e) / torch.sqrt(a)

    if variance == "beta":
        var = b
    elif variance == "posterior":
        var = b * (1 - abp) / (1 - ab)
    else:
        raise ValueError(f"unknown variance {variance!r}")

    nonzero = (t != 0).to(torch.float64).view(-1, *([1] * (x_t.dim() - 1)))
    out = mean + nonzero * torch.sqrt(var) * noise.to(torch.float64)
    return out.to(x_t.dtype)
