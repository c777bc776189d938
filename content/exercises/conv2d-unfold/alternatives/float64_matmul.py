# Style: float64 inside; the product taken patches-first, (N, L, K) @ (K, O), so the bias
# broadcasts on the last axis; permuted to (N, O, H_out, W_out) and cast back at the end.
import torch
from torch.nn import functional as F


def conv2d(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
) -> torch.Tensor:
    stride = (stride, stride) if isinstance(stride, int) else tuple(stride)
    padding = (padding, padding) if isinstance(padding, int) else tuple(padding)
    N, C, H, W = x.shape
    O, _, kh, kw = weight.shape
    Ho = (H + 2 * padding[0] - kh) // stride[0] + 1
    Wo = (W + 2 * padding[1] - kw) // stride[1] + 1

    cols = F.unfold(x.double(), kernel_size=(kh, kw), padding=padding, stride=stride)
    w_t = weight.double().reshape(O, C * kh * kw).t()  # (K, O)
    out = cols.transpose(1, 2) @ w_t  # (N, L, K) @ (K, O) -> (N, L, O)
    if bias is not None:
        out = out + bias.double()
    out = out.reshape(N, Ho, Wo, O).permute(0, 3, 1, 2)
    return out.to(x.dtype).contiguous()
