# Bug: The forward upcasts to float32 for stability and casts back (x.float() ... .to(x.dtype)), which is right for half precision but degrades float64 inputs to float32 precision, so the float64 forward and gradients are off by about 1e-7 relative; a correct version computes in at least the input's precision.
import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        # eps inside the root, added to the mean square: a zero row gives 0, not NaN.
        xf = x.float()
        rrms = torch.rsqrt((xf * xf).mean(dim=-1, keepdim=True) + eps)
        x_hat = xf * rrms
        rrms, x_hat = rrms.to(x.dtype), x_hat.to(x.dtype)
        ctx.save_for_backward(x_hat, rrms, weight)
        return x_hat * weight

    @staticmethod
    def backward(ctx, grad_y):
        x_hat, rrms, weight = ctx.saved_tensors
        lead = tuple(range(grad_y.dim() - 1))
        grad_weight = (grad_y * x_hat).sum(dim=lead)
        g = grad_y * weight
        # x_hat = x * rrms(x): the direct term, minus the part through the row's rms, which
        # removes the component of g along x_hat (scaling a row leaves x_hat unchanged).
        grad_x = rrms * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_weight, None


def rms_norm(x, weight, eps=1e-6):
    return RMSNormFunction.apply(x, weight, eps)
