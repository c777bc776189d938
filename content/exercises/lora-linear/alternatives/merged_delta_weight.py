# Style: a different but equal formula: one linear map with the merged weight W + (alpha/r) B A; register_parameter calls.
import torch
import torch.nn.functional as F
from torch import nn


def _merged_weight(weight, lora_A, lora_B, alpha):
    scaling = alpha / lora_A.shape[0]
    return weight + scaling * (lora_B @ lora_A)      # (out, in)


def lora_forward(x, weight, bias, lora_A, lora_B, alpha):
    return F.linear(x, _merged_weight(weight, lora_A, lora_B, alpha), bias)


class LoRALinear(nn.Module):
    def __init__(self, weight, bias, r, alpha):
        super().__init__()
        self.alpha = float(alpha)
        frozen = lambda t: nn.Parameter(t.detach().clone(), requires_grad=False)
        self.register_parameter("weight", frozen(weight))
        self.register_parameter("bias", None if bias is None else frozen(bias))
        out_features, in_features = weight.shape
        like = dict(dtype=weight.dtype, device=weight.device)
        self.register_parameter(
            "lora_A", nn.Parameter(torch.randn(r, in_features, **like) / in_features ** 0.5))
        self.register_parameter("lora_B", nn.Parameter(torch.zeros(out_features, r, **like)))

    def forward(self, x):
        return lora_forward(x, self.weight, self.bias, self.lora_A, self.lora_B, self.alpha)
