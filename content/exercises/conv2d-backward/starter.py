import torch


def conv2d_backward(
    x: torch.Tensor,
    weight: torch.Tensor,
    grad_out: torch.Tensor,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients of F.conv2d(x, weight, bias, stride, padding) given grad_out.

    x: (N, C, H, W), weight: (O, C, kh, kw), grad_out: (N, O, H_out, W_out).
    Returns grad_input (N, C, H, W), grad_weight (O, C, kh, kw), grad_bias (O,).
    """
    raise NotImplementedError
