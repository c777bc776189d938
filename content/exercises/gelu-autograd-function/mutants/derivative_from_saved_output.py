import math

import torch


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        # Uses the saved output where the input belongs in Phi(x) + x phi(x).
        (y,) = ctx.saved_tensors
        cdf = 0.5 * (1.0 + torch.erf(y / math.sqrt(2.0)))
        pdf = torch.exp(-0.5 * y * y) / math.sqrt(2.0 * math.pi)
        return grad_output * (cdf + y * pdf)


def gelu(x):
    return GELUFunction.apply(x)
