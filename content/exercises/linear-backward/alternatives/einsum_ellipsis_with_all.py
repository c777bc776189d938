# Style: einsum with ellipsis over the leading batch dims, no reshaping; __all__ lists the public name.
import torch

__all__ = ["linear_backward"]


def linear_backward(x, weight, bias, grad_out):
    grad_x = torch.einsum("...o,oi->...i", grad_out, weight)
    grad_weight = torch.einsum("...o,...i->oi", grad_out, x)
    grad_bias = None
    if bias is not None:
        grad_bias = torch.einsum("...o->o", grad_out).to(bias.dtype)
    return grad_x, grad_weight, grad_bias
