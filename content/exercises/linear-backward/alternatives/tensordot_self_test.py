# Style: torch.tensordot contracting the leading dims explicitly (grad_bias as a ones-vector product); a __main__ self-test.
import torch


def linear_backward(x, weight, bias, grad_out):
    lead = list(range(grad_out.dim() - 1))        # [] when there is no batch dimension
    grad_x = torch.tensordot(grad_out, weight, dims=([grad_out.dim() - 1], [0]))
    grad_weight = torch.tensordot(grad_out, x, dims=(lead, lead))
    if bias is None:
        return grad_x, grad_weight, None
    ones = torch.ones(grad_out.shape[:-1], dtype=grad_out.dtype, device=grad_out.device)
    grad_bias = torch.tensordot(ones, grad_out, dims=(lead, lead))
    return grad_x, grad_weight, grad_bias


if __name__ == "__main__":
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    weight = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    grad_out = torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    gx, gw, gb = linear_backward(x, weight, torch.zeros(3), grad_out)
    print(gx, gw, gb, sep="\n")
    # no batch dimension, and an empty batch
    print(linear_backward(x[0], weight, None, grad_out[0]))
    e = linear_backward(torch.empty(0, 2), weight, torch.zeros(3), torch.empty(0, 3))
    print([t.shape for t in e], e[1].abs().sum().item(), e[2].abs().sum().item())
