# Style: a small Weights class with its own inverse-CDF sampler, float64 inside
from dataclasses import dataclass

import torch


@dataclass
class Weights:
    w: torch.Tensor  # non-negative, float64

    def sample(self, u: float) -> int:
        cum = self.w.cumsum(0)
        hits = (cum > u * cum[-1]).nonzero()
        nonzero = (self.w > 0).nonzero()
        last = int(nonzero[-1])
        return min(int(hits[0]), last) if len(hits) else last


def speculative_step(draft_probs, target_probs, draft_tokens, uniforms):
    k = int(draft_tokens.shape[0])
    if tuple(draft_probs.shape[:1]) != (k,) or draft_probs.dim() != 2:
        raise ValueError("draft_probs must be (K, V)")
    v = int(draft_probs.shape[1])
    if tuple(target_probs.shape) != (k + 1, v) or tuple(uniforms.shape) != (k + 1,):
        raise ValueError("target_probs must be (K + 1, V) and uniforms (K + 1,)")
    q = draft_probs.to(torch.float64)
    p = target_probs.to(torch.float64)
    u = uniforms.to(torch.float64)
    kept = []
    for i in range(k):
        x = int(draft_tokens[i])
        if u[i] * q[i, x] < p[i, x]:
            kept.append(x)
            continue
        residual = (p[i] - q[i]).clamp_min(0)
        dist = Weights(residual if bool(residual.any()) else p[i])
        return torch.tensor([*kept, dist.sample(float(u[k]))], dtype=torch.int64)
    return torch.tensor([*kept, Weights(p[k]).sample(float(u[k]))], dtype=torch.int64)
