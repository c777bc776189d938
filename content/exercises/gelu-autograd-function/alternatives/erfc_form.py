# Style: a different but equal formula, Phi(x) = erfc(-x / sqrt 2) / 2 (no cancellation for
# negative x); only x is saved and the backward recomputes Phi and the density.
import math

import torch

_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * (0.5 * torch.erfc(-x * _INV_SQRT2))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        cdf = 0.5 * torch.erfc(-x * _INV_SQRT2)
        pdf = torch.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return grad_output * (cdf + x * pdf)


def gelu(x):
    return GELUFunction.apply(x)
