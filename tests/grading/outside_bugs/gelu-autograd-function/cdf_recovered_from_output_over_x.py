# Bug: The forward saves the output y and the backward recovers Phi(x) as y / x, which is 0/0 = NaN at x = 0 (and imprecise where y underflows); a correct backward computes Phi(x) from the saved input.
import math

import torch

SQRT_2 = math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        # Save the input, not the output: the derivative needs Phi(x) and phi(x), and x
        # cannot be recovered from x * Phi(x) (it is not one-to-one below about -0.75).
        y = x * 0.5 * (1.0 + torch.erf(x / SQRT_2))
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        x, y = ctx.saved_tensors
        cdf = y / x
        pdf = torch.exp(-0.5 * x * x) * INV_SQRT_2PI
        # d/dx [x Phi(x)] = Phi(x) + x phi(x), chained with the incoming gradient.
        return grad_output * (cdf + x * pdf)


def gelu(x: torch.Tensor) -> torch.Tensor:
    return GELUFunction.apply(x)
