# Style: torch.where between the rescaled input and zero, uniform draws in x's dtype; p = 0 and p = 1 short-circuited.
import torch


def dropout(x, p, training=True, generator=None):
    if not training or p == 0:
        return x.clone()
    if p >= 1:
        return torch.zeros_like(x)
    u = torch.rand(x.shape, generator=generator, dtype=x.dtype, device=x.device)
    keep = u >= p                       # P(keep) = P(u >= p) = 1 - p
    return torch.where(keep, x / (1.0 - p), torch.zeros_like(x))
