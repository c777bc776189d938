# Style: backward as an explicit vector-Jacobian product J^T v with einsum, J = (I - x_hat x_hat^T / D) / rms.
import torch

__all__ = ["RMSNormFunction"]


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        ms = torch.einsum("...d,...d->...", x, x) / x.shape[-1]
        rms = torch.sqrt(ms + eps).unsqueeze(-1)
        x_hat = x / rms
        ctx.save_for_backward(x_hat, rms, weight)
        return x_hat * weight

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor):
        x_hat, rms, weight = ctx.saved_tensors
        D = x_hat.shape[-1]
        v = grad_y * weight  # gradient w.r.t. x_hat
        # J^T v without building J: (v - x_hat (x_hat . v) / D) / rms  (J is symmetric)
        proj = torch.einsum("...d,...d->...", x_hat, v).unsqueeze(-1) / D
        grad_x = (v - x_hat * proj) / rms
        lead = "abcdefghijklmnopqrstuvwxy"[: grad_y.dim() - 1]
        grad_w = torch.einsum(f"{lead}z,{lead}z->z", grad_y, x_hat)
        return grad_x, grad_w, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFunction.apply(x, weight, eps)
