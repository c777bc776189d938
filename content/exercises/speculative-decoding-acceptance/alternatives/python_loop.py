# Style: a plain loop over the draft positions with Python floats
import torch


def _sample(weights, u):
    total = sum(weights)
    running = 0.0
    for j, w in enumerate(weights):
        running += w
        if u * total < running:
            return j
    return max(j for j, w in enumerate(weights) if w > 0)


def speculative_step(draft_probs, target_probs, draft_tokens, uniforms):
    k = len(draft_tokens)
    if draft_probs.ndim != 2 or draft_probs.shape[0] != k:
        raise ValueError("draft_probs must have K rows")
    v = draft_probs.shape[1]
    if target_probs.shape != (k + 1, v) or uniforms.shape != (k + 1,):
        raise ValueError("target_probs must be (K + 1, V), uniforms (K + 1,)")
    q_rows = draft_probs.tolist()
    p_rows = target_probs.tolist()
    us = uniforms.tolist()
    out = []
    for i, x in enumerate(draft_tokens.tolist()):
        if us[i] * q_rows[i][x] < p_rows[i][x]:
            out.append(x)
            continue
        residual = [max(0.0, a - b) for a, b in zip(p_rows[i], q_rows[i], strict=False)]
        if not any(r > 0 for r in residual):
            residual = p_rows[i]
        out.append(_sample(residual, us[k]))
        return torch.tensor(out, dtype=torch.int64)
    out.append(_sample(p_rows[k], us[k]))
    return torch.tensor(out, dtype=torch.int64)
