# Style: torch.special.ndtr for Phi; the forward computes the local derivative once and saves
# it (not x), so the backward is a single multiplication.
import math

import torch


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        phi_cdf = torch.special.ndtr(x)
        density = torch.exp(-0.5 * x * x) * (1.0 / math.sqrt(2.0 * math.pi))
        ctx.save_for_backward(phi_cdf + x * density)
        return x * phi_cdf

    @staticmethod
    def backward(ctx, grad_output):
        (slope,) = ctx.saved_tensors
        return grad_output * slope


def gelu(x):
    return GELUFunction.apply(x)
