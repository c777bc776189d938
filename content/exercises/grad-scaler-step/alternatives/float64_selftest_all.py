# Style: module-level __all__ and a self-test block; unscale, norm and update computed in
# float64, new parameters cast back to their dtype.
import math

import torch

__all__ = ["scaler_step"]


def scaler_step(params, scaled_grads, state, lr, max_norm):
    scale = float(state["scale"])
    grads = [g.to(torch.float64) / scale for g in scaled_grads]
    finite = all(bool(torch.isfinite(g).all()) for g in grads)
    new_state = dict(state)

    if not finite:
        new_state["scale"] = scale * state["backoff_factor"]
        new_state["growth_tracker"] = 0
        return [p.clone() for p in params], new_state, False

    total = math.sqrt(sum(float((g * g).sum()) for g in grads))
    coef = min(1.0, max_norm / (total + 1e-6))
    new_params = [(p.to(torch.float64) - lr * coef * g).to(p.dtype) for p, g in zip(params, grads)]

    tracker = int(state["growth_tracker"]) + 1
    if tracker >= state["growth_interval"]:
        new_state["scale"] = scale * state["growth_factor"]
        tracker = 0
    else:
        new_state["scale"] = scale
    new_state["growth_tracker"] = tracker
    return new_params, new_state, True


if __name__ == "__main__":
    state = {"scale": 8.0, "growth_tracker": 1, "growth_factor": 2.0,
             "backoff_factor": 0.5, "growth_interval": 2}
    p, s, ok = scaler_step([torch.tensor([1.0, 1.0])], [torch.tensor([8.0, 0.0])], state,
                           lr=0.1, max_norm=10.0)
    print(p[0], s["scale"], s["growth_tracker"], ok)  # [0.9, 1.0] 16.0 0 True
    p, s, ok = scaler_step(p, [torch.tensor([float("inf"), 0.0])], s, lr=0.1, max_norm=10.0)
    print(p[0], s["scale"], s["growth_tracker"], ok)  # [0.9, 1.0] 8.0 0 False
