# Style: fans by an explicit loop; draws made in float64 (torch.normal, torch.rand) and cast to the weight's dtype; Xavier bound written as sqrt(3) * std.
import math

import torch


def fans(shape):
    if len(shape) < 2:
        raise ValueError("a weight needs at least two dimensions")
    kernel_numel = 1
    for k in shape[2:]:
        kernel_numel = kernel_numel * k
    fan_in = shape[1] * kernel_numel
    fan_out = shape[0] * kernel_numel
    return int(fan_in), int(fan_out)


def kaiming_normal_(weight, generator=None):
    fan_in = fans(tuple(weight.shape))[0]
    gain = math.sqrt(2.0)
    std = gain / math.sqrt(fan_in)
    draws = torch.normal(0.0, std, size=tuple(weight.shape), generator=generator,
                         dtype=torch.float64, device=weight.device)
    with torch.no_grad():
        weight.copy_(draws.to(weight.dtype))
    return weight


def xavier_uniform_(weight, gain=1.0, generator=None):
    fan_in, fan_out = fans(tuple(weight.shape))
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    a = math.sqrt(3.0) * std            # U(-a, a) has standard deviation a / sqrt(3)
    u = torch.rand(tuple(weight.shape), generator=generator, dtype=torch.float64,
                   device=weight.device)
    with torch.no_grad():
        weight.copy_((a * (2.0 * u - 1.0)).to(weight.dtype))
    return weight
