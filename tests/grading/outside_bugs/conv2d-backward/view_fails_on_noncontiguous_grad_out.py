# Bug: grad_out is flattened with .view, which raises on a non-contiguous gradient (a transposed or sliced tensor, as autograd may pass); a correct version uses .reshape.
import torch.nn.functional as F


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d_backward(x, weight, grad_out, stride=1, padding=0):
    n, _, h, w = x.shape
    o = weight.shape[0]
    kernel = tuple(weight.shape[2:])
    stride, padding = _pair(stride), _pair(padding)
    # Forward: out = W_flat @ cols, W_flat (O, CKK), cols (N, CKK, L).
    cols = F.unfold(x, kernel, padding=padding, stride=stride)
    g = grad_out.view(n, o, -1)  # (N, O, L)
    # d/dW_flat: g @ cols^T, summed over the batch (the same weight served every sample).
    grad_weight = (g @ cols.transpose(1, 2)).sum(0).reshape(weight.shape)
    grad_bias = g.sum(dim=(0, 2))
    # d/dcols: W_flat^T @ g; fold adds each column back onto the pixels it was copied from,
    # summing where patches overlap, and drops the padding.
    grad_cols = weight.reshape(o, -1).T @ g
    grad_input = F.fold(grad_cols, (h, w), kernel, padding=padding, stride=stride)
    return grad_input, grad_weight, grad_bias
