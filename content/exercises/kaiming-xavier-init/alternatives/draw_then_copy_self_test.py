# Style: draw standard samples with torch.randn/torch.rand, transform them (affine map), copy_ into the weight; a __main__ self-test.
import torch


def fans(shape):
    shape = tuple(int(s) for s in shape)
    receptive_field = 1
    for s in shape[2:]:
        receptive_field *= s
    return shape[1] * receptive_field, shape[0] * receptive_field


def _fill(weight, values):
    with torch.no_grad():
        weight.copy_(values)
    return weight


def kaiming_normal_(weight, generator=None):
    fan_in, _ = fans(weight.shape)
    std = (2.0 / fan_in) ** 0.5            # ReLU gain sqrt(2) over sqrt(fan_in)
    z = torch.randn(weight.shape, generator=generator, dtype=weight.dtype, device=weight.device)
    return _fill(weight, z * std)


def xavier_uniform_(weight, gain=1.0, generator=None):
    fan_in, fan_out = fans(weight.shape)
    a = gain * (6.0 / (fan_in + fan_out)) ** 0.5
    u = torch.rand(weight.shape, generator=generator, dtype=weight.dtype, device=weight.device)
    return _fill(weight, (2 * u - 1) * a)    # [0, 1) -> [-a, a)


if __name__ == "__main__":
    print(fans((256, 128)), fans((64, 16, 3, 3)))
    g = torch.Generator().manual_seed(0)
    w = kaiming_normal_(torch.empty(512, 1024), generator=g)
    print("kaiming std", w.std().item(), "expected", (2 / 1024) ** 0.5)
    v = xavier_uniform_(torch.empty(300, 500), generator=g)
    print("xavier max |v|", v.abs().max().item(), "bound", (6 / 800) ** 0.5)
    p = torch.nn.Parameter(torch.empty(8, 4, 3, 3))
    print("works on a Parameter:", kaiming_normal_(p, generator=g) is p)
