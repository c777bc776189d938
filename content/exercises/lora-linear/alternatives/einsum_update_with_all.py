# Style: low-rank path written with einsum; Kaiming-uniform bound for lora_A computed by hand; __all__ lists the public names.
import math

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["lora_forward", "LoRALinear"]


def _low_rank(x, lora_A, lora_B, alpha):
    r = lora_A.shape[0]
    h = torch.einsum("...i,ri->...r", x, lora_A)
    return (alpha / r) * torch.einsum("...r,or->...o", h, lora_B)


def lora_forward(x, weight, bias, lora_A, lora_B, alpha):
    return F.linear(x, weight, bias) + _low_rank(x, lora_A, lora_B, alpha)


class LoRALinear(nn.Module):
    def __init__(self, weight, bias, r, alpha):
        super().__init__()
        out_f, in_f = weight.shape
        self.r, self.alpha = r, alpha
        self.weight = nn.Parameter(weight.detach().clone(), requires_grad=False)
        if bias is not None:
            self.bias = nn.Parameter(bias.detach().clone(), requires_grad=False)
        else:
            self.bias = None
        # kaiming_uniform_(a=sqrt(5)) on an (r, in) tensor: bound = 1 / sqrt(in)
        bound = 1.0 / math.sqrt(in_f)
        a = torch.empty(r, in_f, dtype=weight.dtype, device=weight.device).uniform_(-bound, bound)
        self.lora_A = nn.Parameter(a)
        self.lora_B = nn.Parameter(torch.zeros(out_f, r, dtype=weight.dtype, device=weight.device))

    def forward(self, x):
        return F.linear(x, self.weight, self.bias) + _low_rank(x, self.lora_A, self.lora_B,
                                                               self.alpha)
