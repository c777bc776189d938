# Style: one explicit loop that unscales and stops at the first non-finite gradient, squared
# norms accumulated with torch.dot on flattened gradients, the scale rule as a small table.
import math

import torch


def _has_overflow(g: torch.Tensor) -> bool:
    return bool(torch.isnan(g).any() or torch.isinf(g).any())


def scaler_step(params, scaled_grads, state, lr, max_norm):
    scale = state["scale"]
    unscaled = []
    overflow = False
    for sg in scaled_grads:
        g = sg / scale
        if _has_overflow(g):
            overflow = True
            break
        unscaled.append(g)

    tracker = 0 if overflow else state["growth_tracker"] + 1
    grow = (not overflow) and tracker == state["growth_interval"]
    factor = {"skip": state["backoff_factor"], "grow": state["growth_factor"], "keep": 1.0}[
        "skip" if overflow else ("grow" if grow else "keep")
    ]
    new_state = {**state, "scale": scale * factor,
                 "growth_tracker": 0 if grow else tracker}

    if overflow:
        return [p.clone() for p in params], new_state, False

    sq = 0.0
    for g in unscaled:
        flat = g.reshape(-1)
        sq += float(torch.dot(flat, flat))
    total = math.sqrt(sq)
    c = max_norm / (total + 1e-6)
    new_params = []
    for p, g in zip(params, unscaled):
        new_params.append(p - lr * g * c if c < 1.0 else p - lr * g)
    return new_params, new_state, True
