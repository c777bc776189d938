# Bug: The backward differentiates the tanh approximation of GELU rather than the exact erf form the forward computes, so the gradient is off by up to about 1e-3; a correct backward is Phi(x) + x * phi(x).
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
        k = math.sqrt(2.0 / math.pi)
        inner = k * (x + 0.044715 * x**3)
        t = torch.tanh(inner)
        d = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3 * 0.044715 * x * x)
        return grad_output * d


def gelu(x: torch.Tensor) -> torch.Tensor:
    return GELUFunction.apply(x)
