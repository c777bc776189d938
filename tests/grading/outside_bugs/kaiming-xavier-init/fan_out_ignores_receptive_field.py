# Bug: fans multiplies only fan_in by the kernel's number of elements, so a convolution's fan_out is out_channels instead of out_channels * receptive field, which shrinks Xavier's bound for conv weights.
import math

import torch


def fans(shape):
    # Each output unit sums in_channels * kernel elements; each input element reaches
    # out_channels * kernel outputs.
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0]


@torch.no_grad()
def kaiming_normal_(weight, generator=None):
    fan_in, _ = fans(tuple(weight.shape))
    # ReLU zeroes half the signal, halving its second moment: the gain sqrt(2) restores it.
    std = math.sqrt(2.0) / math.sqrt(fan_in)
    return weight.normal_(0.0, std, generator=generator)


@torch.no_grad()
def xavier_uniform_(weight, gain=1.0, generator=None):
    fan_in, fan_out = fans(tuple(weight.shape))
    # Var(U(-a, a)) = a^2 / 3; Xavier asks for 2 / (fan_in + fan_out), hence the 6.
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return weight.uniform_(-bound, bound, generator=generator)
