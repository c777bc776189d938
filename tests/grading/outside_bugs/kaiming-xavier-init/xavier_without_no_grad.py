# Bug: xavier_uniform_ fills the weight in place without torch.no_grad(), so on a weight that requires grad (an nn.Parameter) the in-place uniform_ raises 'a leaf Variable that requires grad is being used in an in-place operation'; a correct version runs under no_grad.
import math

import torch


def fans(shape):
    # Each output unit sums in_channels * kernel elements; each input element reaches
    # out_channels * kernel outputs.
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


@torch.no_grad()
def kaiming_normal_(weight, generator=None):
    fan_in, _ = fans(tuple(weight.shape))
    # ReLU zeroes half the signal, halving its second moment: the gain sqrt(2) restores it.
    std = math.sqrt(2.0) / math.sqrt(fan_in)
    return weight.normal_(0.0, std, generator=generator)


def xavier_uniform_(weight, gain=1.0, generator=None):
    fan_in, fan_out = fans(tuple(weight.shape))
    # Var(U(-a, a)) = a^2 / 3; Xavier asks for 2 / (fan_in + fan_out), hence the 6.
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return weight.uniform_(-bound, bound, generator=generator)
