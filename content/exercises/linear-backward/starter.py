import torch


def linear_backward(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    grad_out: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """The gradients of y = x @ weight.T + bias.

    x: (*, in_features); weight: (out_features, in_features); bias: (out_features,) or None;
    grad_out: dL/dy, (*, out_features).
    Returns (grad_x (*, in_features), grad_weight (out_features, in_features),
    grad_bias (out_features,) or None).
    """
    raise NotImplementedError
