# Style: a Python loop over the samples with scalar float coefficients, float64 inside and
# cast back; a __main__ self-test.
import math

import torch


def _bars(betas):
    out, running = [], 1.0
    for b in betas.tolist():
        running *= 1.0 - b
        out.append(running)
    return out


def predict_x0(x_t, t, eps_pred, alpha_bars):
    rows = []
    for i in range(x_t.shape[0]):
        ab = float(alpha_bars[t[i]])
        rows.append((x_t[i].double() - math.sqrt(1 - ab) * eps_pred[i].double()) / math.sqrt(ab))
    return torch.stack(rows).to(x_t.dtype)


def p_sample_step(x_t, t, eps_pred, betas, noise, variance="beta", clip_denoised=False):
    bars = _bars(betas)
    rows = []
    for i in range(x_t.shape[0]):
        s = int(t[i])
        beta, ab = float(betas[s]), bars[s]
        prev = bars[s - 1] if s > 0 else 1.0
        x, e = x_t[i].double(), eps_pred[i].double()
        if clip_denoised:
            x0 = ((x - math.sqrt(1 - ab) * e) / math.sqrt(ab)).clamp(-1, 1)
            mean = (math.sqrt(prev) * beta * x0 + math.sqrt(1 - beta) * (1 - prev) * x) / (1 - ab)
        else:
            mean = (x - beta / math.sqrt(1 - ab) * e) / math.sqrt(1 - beta)
        if s > 0:
            var = beta if variance == "beta" else beta * (1 - prev) / (1 - ab)
            mean = mean + math.sqrt(var) * noise[i].double()
        rows.append(mean)
    return torch.stack(rows).to(x_t.dtype)


if __name__ == "__main__":
    betas = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
    x = torch.randn(3, 2)
    e = torch.randn(3, 2)
    t = torch.tensor([0, 2, 3])
    a = p_sample_step(x, t, e, betas, torch.randn(3, 2))
    b = p_sample_step(x, t, e, betas, torch.randn(3, 2))
    assert torch.equal(a[0], b[0]), "no noise at t = 0"
    print(a)
