import torch


def conv2d(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
) -> torch.Tensor:
    """x: (N, C, H, W), weight: (O, C, kh, kw), bias: (O,) or None.

    Returns (N, O, H_out, W_out), H_out = (H + 2 * pad_h - kh) // stride_h + 1.
    """
    raise NotImplementedError
