# Style: module-level __all__; unfold/fold with every product written as an einsum.
import torch
import torch.nn.functional as F

__all__ = ["conv2d_backward"]


def _pair(v):
    return (v, v) if isinstance(v, int) else (int(v[0]), int(v[1]))


def conv2d_backward(x, weight, grad_out, stride=1, padding=0):
    stride, padding = _pair(stride), _pair(padding)
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    # forward: out[n, o, l] = sum_k W[o, k] * cols[n, k, l]
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)  # (N, K, L)
    g = grad_out.reshape(n, o, -1)  # (N, O, L)
    w_flat = weight.reshape(o, -1)  # (O, K)

    grad_weight = torch.einsum("nol,nkl->ok", g, cols).reshape(weight.shape)
    grad_cols = torch.einsum("ok,nol->nkl", w_flat, g)
    grad_input = F.fold(grad_cols, (h, w), (kh, kw), padding=padding, stride=stride)
    grad_bias = torch.einsum("nol->o", g)
    return grad_input, grad_weight, grad_bias
