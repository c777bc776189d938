# Bug: grad_x is computed from grad_y instead of grad_y * weight, forgetting that y is x_hat scaled by the weight, so the input gradient is wrong whenever the weight is not all ones.
import torch


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        # eps inside the root, added to the mean square: a zero row gives 0, not NaN.
        rrms = torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + eps)
        x_hat = x * rrms
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
        grad_x = rrms * (grad_y - x_hat * (grad_y * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_weight, None


def rms_norm(x, weight, eps=1e-6):
    return RMSNormFunction.apply(x, weight, eps)
