# Style: plain Python loops for the schedule and the product, a per-sample loop for q_sample
# computed in float64 and cast back; a __main__ self-test.
import math

import torch


def linear_beta_schedule(num_steps, beta_start=1e-4, beta_end=0.02):
    if num_steps == 1:
        return torch.tensor([beta_start], dtype=torch.float64)
    step = (beta_end - beta_start) / (num_steps - 1)
    return torch.tensor([beta_start + i * step for i in range(num_steps)], dtype=torch.float64)


def alpha_bars(betas):
    out = []
    running = torch.ones((), dtype=betas.dtype)
    for b in betas:
        running = running * (1 - b)
        out.append(running)
    return torch.stack(out) if out else betas.new_empty(0)


def q_sample(x0, t, noise, alpha_bars):
    rows = []
    for i in range(x0.shape[0]):
        ab = alpha_bars[t[i]].double()
        rows.append(ab.sqrt() * x0[i].double() + (1 - ab).sqrt() * noise[i].double())
    return torch.stack(rows).to(x0.dtype)


if __name__ == "__main__":
    bars = alpha_bars(linear_beta_schedule(5, 0.1, 0.5))
    assert math.isclose(bars[-1].item(), 0.9 * 0.8 * 0.7 * 0.6 * 0.5)
    print(q_sample(torch.ones(2, 3), torch.tensor([0, 4]), torch.zeros(2, 3), bars))
