# Bug: backward multiplies grad_output in place (grad_output.mul_) and returns it, corrupting a gradient tensor autograd may still use elsewhere (e.g. when the same upstream gradient feeds another branch); a correct backward returns a new tensor.
import math

import torch

SQRT_2 = math.sqrt(2.0)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        # Save the input, not the output: the derivative needs Phi(x) and phi(x), and x
        # cannot be recovered from x * Phi(x) (it is not one-to-one below about -0.75).
        ctx.save_for_backward(x)
        return x * 0.5 * (1.0 + torch.erf(x / SQRT_2))

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        cdf = 0.5 * (1.0 + torch.erf(x / SQRT_2))
        pdf = torch.exp(-0.5 * x * x) * INV_SQRT_2PI
        # d/dx [x Phi(x)] = Phi(x) + x phi(x), chained with the incoming gradient.
        return grad_output.mul_(cdf + x * pdf)


def gelu(x: torch.Tensor) -> torch.Tensor:
    return GELUFunction.apply(x)
