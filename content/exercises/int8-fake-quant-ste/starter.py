import torch


def per_channel_scale(w: torch.Tensor) -> torch.Tensor:
    """w: (C, *). Returns (C,): max |w[c]| / 127, or 1 for an all-zero channel."""
    raise NotImplementedError


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, w: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
        """w: (C, *); scale: (C,). Returns clamp(round(w / s), -127, 127) * s, shaped like w."""
        raise NotImplementedError

    @staticmethod
    def backward(ctx, grad_output: torch.Tensor):
        """grad_output: shaped like w. Returns (grad_w, None): 0 where the value was clamped."""
        raise NotImplementedError


def fake_quant(w: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
    if scale is None:
        scale = per_channel_scale(w)
    return FakeQuantSTE.apply(w, scale)
