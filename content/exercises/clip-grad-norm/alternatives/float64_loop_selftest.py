# Style: explicit loop accumulating the norm in float64 across gradients, cast back at the
# end; self-test block with the statement's example.
import math

import torch


def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norm_type = float(norm_type)
    acc = torch.zeros((), dtype=torch.float64, device=grads[0].device)
    for g in grads:
        gd = g.detach().to(torch.float64)
        if math.isinf(norm_type):
            if gd.numel():
                acc = torch.maximum(acc, gd.abs().max())
        else:
            acc = acc + (gd * gd).sum()
    total = acc if math.isinf(norm_type) else acc.sqrt()
    if total > max_norm:
        factor = max_norm / (total + 1e-6)
        for g in grads:
            g.mul_(factor.to(g.dtype))
    return total.to(grads[0].dtype)


if __name__ == "__main__":
    a = torch.zeros(2, requires_grad=True)
    a.grad = torch.tensor([3.0, 0.0])
    b = torch.zeros(1, requires_grad=True)
    b.grad = torch.tensor([4.0])
    c = torch.zeros(1, requires_grad=True)
    print(clip_grad_norm_([a, b, c], max_norm=1.0))  # tensor(5.)
    print(a.grad, b.grad, c.grad)  # [0.6, 0.0], [0.8], None
