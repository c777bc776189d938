# Bug: The frozen weight and bias are wrapped as nn.Parameter(weight) without cloning, so the layer's parameters share memory with the caller's tensors and any change to either (e.g. merging B A into the weight, or the caller reusing its tensor) shows up in the other; a correct layer stores copies.
import math

import torch
import torch.nn.functional as F
from torch import nn


def lora_forward(x, weight, bias, lora_A, lora_B, alpha):
    scaling = alpha / lora_A.shape[0]
    # x A^T first: (..., r) is small, so the update costs O(r (in + out)) per row and the
    # (out, in) product B A is never formed.
    return F.linear(x, weight, bias) + scaling * ((x @ lora_A.T) @ lora_B.T)


class LoRALinear(nn.Module):
    def __init__(self, weight, bias, r, alpha):
        super().__init__()
        self.weight = nn.Parameter(weight.detach(), requires_grad=False)
        self.bias = None if bias is None else nn.Parameter(bias.detach(), requires_grad=False)
        self.alpha = alpha
        out_features, in_features = weight.shape
        a = torch.empty(r, in_features, dtype=weight.dtype, device=weight.device)
        nn.init.kaiming_uniform_(a, a=math.sqrt(5))
        self.lora_A = nn.Parameter(a)
        # B = 0: the adapted layer starts as the base layer, and A still gets no gradient at
        # step one, B does (from x A^T), so training can start.
        self.lora_B = nn.Parameter(torch.zeros(out_features, r, dtype=weight.dtype, device=weight.device))

    def forward(self, x):
        return lora_forward(x, self.weight, self.bias, self.lora_A, self.lora_B, self.alpha)
