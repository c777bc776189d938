# Bug: The variance is taken with torch.var's default unbiased estimator (divide by D - 1) instead of the biased one nn.LayerNorm uses (divide by D), so the output is scaled wrongly and a single feature gives 0/0 = NaN.
import torch


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        mean = x.mean(dim=-1, keepdim=True)
        centred = x - mean
        # Two passes (mean, then the mean of squared deviations): E[x^2] - E[x]^2 cancels
        # catastrophically when the mean is large against the spread.
        var = x.var(dim=-1, keepdim=True)
        rstd = torch.rsqrt(var + eps)
        x_hat = centred * rstd
        ctx.save_for_backward(x_hat, rstd, weight)
        return x_hat * weight + bias

    @staticmethod
    def backward(ctx, grad_y):
        x_hat, rstd, weight = ctx.saved_tensors
        lead = tuple(range(grad_y.dim() - 1))
        grad_weight = (grad_y * x_hat).sum(dim=lead)
        grad_bias = grad_y.sum(dim=lead)
        g = grad_y * weight
        # x_hat depends on x directly and through the mean and the variance; the last two
        # give the two subtracted terms (projecting out shifts and rescalings of the row).
        grad_x = rstd * (
            g - g.mean(dim=-1, keepdim=True) - x_hat * (g * x_hat).mean(dim=-1, keepdim=True)
        )
        return grad_x, grad_weight, grad_bias, None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)
