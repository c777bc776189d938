# Style: my own helpers; all gradients flattened into one vector, processed once (unscale,
# check, clip, step) and split back into the parameters' shapes; scale rule in a helper.
import torch


def _flatten(tensors):
    if not tensors:
        return torch.zeros(0)
    return torch.cat([t.reshape(-1) for t in tensors])


def _unflatten(flat, like):
    sizes = [t.numel() for t in like]
    return [piece.view_as(t) for piece, t in zip(torch.split(flat, sizes), like)]


def _next_scale(state, stepped):
    """(scale, growth_tracker) after a step that was taken or skipped."""
    if not stepped:
        return state["scale"] * state["backoff_factor"], 0
    tracker = state["growth_tracker"] + 1
    if tracker == state["growth_interval"]:
        return state["scale"] * state["growth_factor"], 0
    return state["scale"], tracker


def scaler_step(params, scaled_grads, state, lr, max_norm):
    g = _flatten(scaled_grads) / state["scale"]
    stepped = bool(torch.isfinite(g).all())
    new_state = dict(state)
    new_state["scale"], new_state["growth_tracker"] = _next_scale(state, stepped)
    if not stepped:
        return [p.clone() for p in params], new_state, False

    total = g.pow(2).sum().sqrt()
    clip = (max_norm / (total + 1e-6)).clamp(max=1.0)
    p_flat = _flatten(params)
    return _unflatten(p_flat - lr * clip * g, params), new_state, True
