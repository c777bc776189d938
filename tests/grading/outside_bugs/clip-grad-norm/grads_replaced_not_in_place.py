# Bug: Clipping assigns a new tensor to p.grad (p.grad = p.grad * factor) instead of scaling the existing gradient tensor in place, so anyone holding the gradient tensor (an optimiser, a hook, the caller) still sees the unclipped values; a correct version multiplies each .grad in place.
import math

import torch


@torch.no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0):
    params = [p for p in parameters if p.grad is not None]
    grads = [p.grad for p in params]
    if not grads:
        return torch.tensor(0.0)
    # The global norm is the norm of the per-tensor norms: one long vector, never concatenated.
    if math.isinf(norm_type):
        total = torch.stack([g.abs().max() if g.numel() else g.new_zeros(()) for g in grads]).max()
    else:
        per_tensor = torch.stack([torch.linalg.vector_norm(g, norm_type) for g in grads])
        total = torch.linalg.vector_norm(per_tensor, norm_type)
    # One factor for every gradient keeps the update's direction; at most 1, so small
    # gradients are never scaled up. The 1e-6 guards a zero total.
    factor = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for p in params:
        p.grad = p.grad * factor.to(p.grad.dtype)
    return total
