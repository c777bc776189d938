# Style: helpers that flatten to (rows, D); backward in terms of x and mean-square, no x_hat; self-test.
import torch


def _as_rows(t: torch.Tensor) -> torch.Tensor:
    return t.reshape(-1, t.shape[-1])


def _mean_square(rows: torch.Tensor, eps: float) -> torch.Tensor:
    """ms + eps for each row, shape (rows, 1)."""
    return (rows * rows).sum(dim=1, keepdim=True) / rows.shape[1] + eps


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        rows = _as_rows(x)
        s = _mean_square(rows, eps)  # (R, 1)
        ctx.save_for_backward(x, weight, s)
        return (rows / torch.sqrt(s) * weight).reshape(x.shape)

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor):
        x, weight, s = ctx.saved_tensors
        rows, g = _as_rows(x), _as_rows(grad_y)
        D = rows.shape[1]
        r = torch.sqrt(s)  # rms
        gw = g * weight  # upstream gradient through the scale
        # y_j = w_j x_j / r with dr/dx_k = x_k / (D r); so
        # dL/dx_k = gw_k / r - x_k * sum_j(gw_j x_j) / (D r^3)
        dot = (gw * rows).sum(dim=1, keepdim=True)
        grad_x = gw / r - rows * dot / (D * s * r)
        grad_w = (g * rows / r).sum(dim=0)
        return grad_x.reshape(x.shape), grad_w, None


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    return RMSNormFunction.apply(x, weight, eps)


if __name__ == "__main__":
    x = torch.tensor([[3.0, 4.0], [1.0, -1.0]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    print(rms_norm(x, w))
    print(torch.autograd.gradcheck(lambda a, b: rms_norm(a, b, 1e-6), (x, w)))
    x3 = torch.randn(2, 3, 5, dtype=torch.float64, requires_grad=True)
    w3 = torch.randn(5, dtype=torch.float64, requires_grad=True)
    print(torch.autograd.gradcheck(lambda a, b: rms_norm(a, b, 1e-5), (x3, w3)))
