# Bug: Rounding uses floor(w / s + 0.5), halves away upward, instead of torch.round's halves to even, so an exact .5 quotient like 2.5 goes to 3 instead of 2.
import torch

QMAX = 127  # symmetric int8: [-127, 127], so that zero is exact and the range is symmetric


def per_channel_scale(w):
    # One scale per output channel (dim 0): its largest magnitude maps to 127.
    amax = w.detach().abs().flatten(1).amax(dim=1)
    # An all-zero channel would get scale 0 and divide by it; any positive scale works there.
    return torch.where(amax > 0, amax / QMAX, torch.ones_like(amax))


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, scale):
        s = scale.reshape(-1, *[1] * (w.dim() - 1))
        q = torch.floor(w / s + 0.5)
        # The straight-through estimator treats round as the identity, but clamp is real:
        # where the value was clipped, the output no longer moves with w.
        inside = (q >= -QMAX) & (q <= QMAX)
        ctx.save_for_backward(inside)
        return torch.clamp(q, -QMAX, QMAX) * s

    @staticmethod
    def backward(ctx, grad_output):
        (inside,) = ctx.saved_tensors
        return grad_output * inside.to(grad_output.dtype), None


def fake_quant(w, scale=None):
    if scale is None:
        scale = per_channel_scale(w)
    return FakeQuantSTE.apply(w, scale)
