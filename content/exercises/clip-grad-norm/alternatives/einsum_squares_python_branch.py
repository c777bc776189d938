# Style: squared L2 norm as a sum of einsum self-dot-products (inf: max of abs maxima over a
# concatenation); the decision is a Python branch on the value, the scale a Python float.
import math

import torch


def _squared_sum(g: torch.Tensor) -> torch.Tensor:
    flat = g.reshape(-1)
    return torch.einsum("i,i->", flat, flat)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    with torch.no_grad():
        if math.isinf(norm_type):
            flat_abs = torch.cat([g.reshape(-1).abs() for g in grads])
            total = flat_abs.max() if flat_abs.numel() else flat_abs.new_zeros(())
        else:
            total = torch.sqrt(sum(_squared_sum(g) for g in grads))
        value = float(total)
        if value > max_norm:
            ratio = max_norm / (value + 1e-6)
            for g in grads:
                g.mul_(ratio)
    return total
