# Bug: The straight-through mask uses strict bounds (-127 < q < 127), so a weight that lands exactly on +-127 (every channel's largest weight under its own per-channel scale) gets zero gradient although it was not clamped; a correct mask keeps q in [-127, 127].
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
        q = torch.round(w / s)
        # The straight-through estimator treats round as the identity, but clamp is real:
        # where the value was clipped, the output no longer moves with w.
        inside = (q > -QMAX) & (q < QMAX)
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
