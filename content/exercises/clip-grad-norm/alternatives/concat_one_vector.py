# Style: concatenate all gradients into one flat vector and take its vector_norm; the clip
# coefficient is clamped at 1 and applied with torch.where, so no Python branch on a value.
import torch


def clip_grad_norm_(
    parameters: list[torch.Tensor], max_norm: float, norm_type: float = 2.0
) -> torch.Tensor:
    with_grad = [p for p in parameters if p.grad is not None]
    if len(with_grad) == 0:
        return torch.tensor(0.0)
    flat = torch.cat([p.grad.detach().reshape(-1) for p in with_grad])
    total = torch.linalg.vector_norm(flat, ord=norm_type)
    coef = torch.where(total > max_norm, max_norm / (total + 1e-6), torch.ones_like(total))
    for p in with_grad:
        p.grad.detach().mul_(coef.to(p.grad.dtype))
    return total
