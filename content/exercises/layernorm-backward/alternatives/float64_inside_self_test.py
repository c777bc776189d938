# Style: forward and backward computed in float64 and cast back; grad_x as (D g - sum g - xhat sum(g xhat)) / (D sigma); a __main__ self-test.
import torch


class LayerNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        x64 = x.double()
        mean = x64.mean(-1, keepdim=True)
        dev = x64 - mean
        var = (dev * dev).mean(-1, keepdim=True)          # biased
        sigma = (var + eps).sqrt()
        xhat = dev / sigma
        ctx.save_for_backward(xhat, sigma, weight)
        ctx.dtypes = (x.dtype, weight.dtype, bias.dtype)
        return (xhat * weight.double() + bias.double()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad_y):
        xhat, sigma, weight = ctx.saved_tensors
        x_dtype, w_dtype, b_dtype = ctx.dtypes
        D = xhat.shape[-1]
        gy = grad_y.double()
        g = gy * weight.double()
        grad_x = (D * g - g.sum(-1, keepdim=True)
                  - xhat * (g * xhat).sum(-1, keepdim=True)) / (D * sigma)
        lead = tuple(range(gy.dim() - 1))
        grad_w = (gy * xhat).sum(dim=lead) if lead else gy * xhat
        grad_b = gy.sum(dim=lead) if lead else gy.clone()
        return grad_x.to(x_dtype), grad_w.to(w_dtype), grad_b.to(b_dtype), None


def layer_norm(x, weight, bias, eps=1e-5):
    return LayerNormFunction.apply(x, weight, bias, eps)


if __name__ == "__main__":
    x = torch.tensor([[1.0, 2.0, 3.0], [2.0, 2.0, 5.0]])
    print(layer_norm(x, torch.ones(3), torch.zeros(3)))
    torch.manual_seed(0)
    xs = torch.randn(2, 3, 6, dtype=torch.float64, requires_grad=True)
    w = torch.randn(6, dtype=torch.float64, requires_grad=True)
    b = torch.randn(6, dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(lambda a, c, d: layer_norm(a, c, d), (xs, w, b))
    print("gradcheck:", ok)
