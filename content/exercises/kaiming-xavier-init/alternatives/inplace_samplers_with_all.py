# Style: standard draws made in place then rescaled in place (normal_().mul_, uniform_(-1, 1).mul_); fans via functools.reduce; __all__.
import functools
import operator

import torch

__all__ = ["fans", "kaiming_normal_", "xavier_uniform_"]


def fans(shape):
    out_ch, in_ch = shape[0], shape[1]
    receptive = functools.reduce(operator.mul, shape[2:], 1)   # 1 for a linear weight
    return in_ch * receptive, out_ch * receptive


def kaiming_normal_(weight, generator=None):
    fan_in = fans(tuple(weight.shape))[0]
    std = (2.0 / fan_in) ** 0.5
    with torch.no_grad():
        weight.normal_(generator=generator).mul_(std)        # N(0, 1) * std = N(0, std^2)
    return weight


def xavier_uniform_(weight, gain=1.0, generator=None):
    fan_in, fan_out = fans(tuple(weight.shape))
    bound = gain * (6.0 / (fan_in + fan_out)) ** 0.5
    with torch.no_grad():
        weight.uniform_(-1.0, 1.0, generator=generator).mul_(bound)
    return weight
