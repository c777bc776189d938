# Style: explicit Python loop over output channels, clamping with minimum/maximum; a __main__ self-test of the statement's example.
import torch


def per_channel_scale(w):
    scales = []
    for c in range(w.shape[0]):
        m = w[c].detach().abs().max()
        scales.append(m / 127 if m != 0 else torch.ones_like(m))
    return torch.stack(scales)


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w, scale):
        out = torch.empty_like(w)
        keep = torch.empty_like(w, dtype=torch.bool)
        for c in range(w.shape[0]):
            s = scale[c]
            q = torch.round(w[c] / s)
            keep[c] = q.abs() <= 127
            out[c] = torch.maximum(torch.minimum(q, q.new_tensor(127.0)), q.new_tensor(-127.0)) * s
        ctx.save_for_backward(keep)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (keep,) = ctx.saved_tensors
        return grad_output.masked_fill(~keep, 0), None


def fake_quant(w, scale=None):
    if scale is None:
        scale = per_channel_scale(w)
    return FakeQuantSTE.apply(w, scale)


if __name__ == "__main__":
    w = torch.tensor([[0.5, -1.0, 0.26], [2.0, 0.0, -0.7]], requires_grad=True)
    print(per_channel_scale(w))
    y = fake_quant(w, torch.tensor([0.005, 0.01]))
    print(y)
    print(fake_quant(torch.zeros(2, 3)))           # all-zero channels: scale 1, stays zero
