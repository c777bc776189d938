# Style: forward and backward computed in float64 with rsqrt, results cast back to the input dtypes.
import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        x64, w64 = x.to(torch.float64), weight.to(torch.float64)
        inv_rms = torch.rsqrt(x64.pow(2).mean(dim=-1, keepdim=True) + eps)  # (*, 1)
        ctx.save_for_backward(x, weight, inv_rms)
        return (x64 * inv_rms * w64).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor):
        x, weight, inv_rms = ctx.saved_tensors
        x_hat = x.to(torch.float64) * inv_rms
        g = grad_y.to(torch.float64)
        # dL/dx_hat = g * w; then project out the direction of x_hat and rescale:
        # grad_x = inv_rms * (g_hat - x_hat * mean(g_hat * x_hat))
        g_hat = g * weight.to(torch.float64)
        grad_x = inv_rms * (g_hat - x_hat * (g_hat * x_hat).mean(dim=-1, keepdim=True))
        grad_w = (g * x_hat).reshape(-1, x.shape[-1]).sum(dim=0)
        return grad_x.to(x.dtype), grad_w.to(weight.dtype), None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFunction.apply(x, weight, eps)
