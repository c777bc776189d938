# Style: a small callable class holding p and its scale; masked_fill on the dropped positions, then one multiply.
import torch


class _InvertedDropout:
    def __init__(self, p):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p}")
        self.p = float(p)
        self.scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)

    def __call__(self, x, generator):
        drop = torch.rand(x.shape, generator=generator, device=x.device) < self.p
        return x.masked_fill(drop, 0.0) * self.scale


def dropout(x, p, training=True, generator=None):
    if training:
        return _InvertedDropout(p)(x, generator)
    return x.clone()
