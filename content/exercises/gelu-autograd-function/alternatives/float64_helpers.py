# Style: helper functions for the normal CDF and density, evaluated in float64 inside both
# passes and cast back to the caller's dtype.
import math

import torch


def _normal_cdf(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _normal_pdf(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(-0.5 * x.square()) / math.sqrt(2.0 * math.pi)


def _gelu_grad(x: torch.Tensor) -> torch.Tensor:
    """d/dx [x * Phi(x)] = Phi(x) + x * phi(x)."""
    return _normal_cdf(x) + x * _normal_pdf(x)


class GELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        x64 = x.to(torch.float64)
        return (x64 * _normal_cdf(x64)).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        slope = _gelu_grad(x.to(torch.float64))
        return (grad_output.to(torch.float64) * slope).to(grad_output.dtype)


def gelu(x: torch.Tensor) -> torch.Tensor:
    return GELUFunction.apply(x)
