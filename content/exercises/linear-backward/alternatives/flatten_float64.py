# Style: leading dims flattened into one batch of rows; products computed in float64, cast back to each input's dtype.
import torch


def linear_backward(x, weight, bias, grad_out):
    in_f = weight.shape[1]
    out_f = weight.shape[0]
    X = x.reshape(-1, in_f).to(torch.float64)            # (N, in)
    G = grad_out.reshape(-1, out_f).to(torch.float64)    # (N, out)
    W = weight.to(torch.float64)

    grad_x = (G @ W).reshape(x.shape).to(x.dtype)
    grad_weight = (G.t() @ X).to(weight.dtype)            # sum over rows of g_n x_n^T
    grad_bias = None if bias is None else G.sum(dim=0).to(bias.dtype)
    return grad_x, grad_weight, grad_bias
