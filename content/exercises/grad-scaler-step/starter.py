import torch


def scaler_step(
    params: list[torch.Tensor],
    scaled_grads: list[torch.Tensor],
    state: dict,
    lr: float,
    max_norm: float,
) -> tuple[list[torch.Tensor], dict, bool]:
    """Unscale, skip on inf/NaN, clip to max_norm, SGD step, update the scale.
    Returns (new params, same shapes; the new state dict; whether the step was taken)."""
    raise NotImplementedError
