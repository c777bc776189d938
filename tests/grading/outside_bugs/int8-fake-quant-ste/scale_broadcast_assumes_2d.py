# Bug: The scale is broadcast as scale[:, None], which only fits a 2-D weight; for a (C, K, kh, kw) convolution weight it lines up with the wrong dims (an error or a wrong result), where a correct version reshapes to (C, 1, 1, ...).
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
        s = scale[:, None]
        q = torch.round(w / s)
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
