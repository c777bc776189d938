# Style: forward saves w and the broadcast scale; backward recomputes the rounding and masks with torch.where; scale from flatten(1).max.
import torch


def per_channel_scale(w):
    peak = w.detach().flatten(1).abs().max(dim=1).values
    scale = peak / 127.0
    scale[peak == 0] = 1.0
    return scale


def _broadcast_scale(scale, w):
    return scale.view(scale.shape[0], *([1] * (w.ndim - 1)))


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, scale):
        s = _broadcast_scale(scale, w)
        ctx.save_for_backward(w, s)
        levels = torch.round(w / s)
        return torch.clamp(levels, min=-127, max=127) * s

    @staticmethod
    def backward(ctx, grad_output):
        w, s = ctx.saved_tensors
        levels = torch.round(w / s)
        clamped = levels.abs() > 127
        grad_w = torch.where(clamped, torch.zeros_like(grad_output), grad_output)
        return grad_w, None


def fake_quant(w, scale=None):
    if scale is None:
        scale = per_channel_scale(w)
    return FakeQuantSTE.apply(w, scale)
