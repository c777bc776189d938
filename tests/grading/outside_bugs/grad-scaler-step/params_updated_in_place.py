# Bug: A taken step updates the given parameter tensors in place (p.sub_) and returns them, overwriting the caller's params; a correct version returns new tensors.
import torch


def scaler_step(params, scaled_grads, state, lr, max_norm):
    scale = state["scale"]
    # Unscale first: everything that reads the gradients (the inf check, the clipping
    # threshold) is about the true gradients, not the scaled ones.
    grads = [g / scale for g in scaled_grads]
    finite = all(bool(torch.isfinite(g).all()) for g in grads)
    new_state = dict(state)
    if not finite:
        # Overflow: this step's gradients are garbage. Skip it and lower the scale.
        new_state["scale"] = scale * state["backoff_factor"]
        new_state["growth_tracker"] = 0
        return [p.clone() for p in params], new_state, False
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    new_params = [p.sub_(lr * (g * coef)) for p, g in zip(params, grads)]
    tracker = state["growth_tracker"] + 1
    if tracker == state["growth_interval"]:
        # A run of finite steps: try a larger scale, for more headroom against underflow.
        new_state["scale"] = scale * state["growth_factor"]
        tracker = 0
    new_state["growth_tracker"] = tracker
    return new_params, new_state, True
