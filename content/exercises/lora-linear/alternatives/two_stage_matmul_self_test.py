# Style: rank-r bottleneck as two explicit matmuls with the scale applied on the narrow side; extra_repr; a __main__ self-test.
import torch
from torch import nn


def lora_forward(x, weight, bias, lora_A, lora_B, alpha):
    base = torch.nn.functional.linear(x, weight, bias)
    down = x @ lora_A.transpose(0, 1)                    # (..., r)
    down = down * (alpha / lora_A.size(0))
    return base + down @ lora_B.transpose(0, 1)          # (..., out)


class LoRALinear(nn.Module):
    def __init__(self, weight, bias, r, alpha):
        super().__init__()
        if r < 1:
            raise ValueError("rank r must be positive")
        self.r = r
        self.alpha = alpha
        self.weight = nn.Parameter(weight.detach().clone())
        self.weight.requires_grad_(False)
        self.bias = None
        if bias is not None:
            self.bias = nn.Parameter(bias.detach().clone())
            self.bias.requires_grad_(False)
        out_features, in_features = weight.shape
        A = torch.empty(r, in_features, dtype=weight.dtype, device=weight.device)
        A.normal_(0.0, 0.02)
        self.lora_A = nn.Parameter(A)
        self.lora_B = nn.Parameter(A.new_zeros(out_features, r))

    def extra_repr(self):
        out_f, in_f = self.weight.shape
        return f"in={in_f}, out={out_f}, r={self.r}, alpha={self.alpha}"

    def forward(self, x):
        return lora_forward(x, self.weight, self.bias, self.lora_A, self.lora_B, self.alpha)


if __name__ == "__main__":
    layer = LoRALinear(torch.eye(3), None, r=2, alpha=4.0)
    print(torch.equal(layer(torch.ones(1, 3)), torch.ones(1, 3)))
    print([n for n, p in layer.named_parameters() if p.requires_grad])
    torch.manual_seed(0)
    W, b = torch.randn(5, 4), torch.randn(5)
    lay = LoRALinear(W, b, r=2, alpha=8.0)
    x = torch.randn(3, 7, 4)
    lay(x).square().sum().backward()
    print({n: p.grad is not None for n, p in lay.named_parameters()})
    print(lay)
