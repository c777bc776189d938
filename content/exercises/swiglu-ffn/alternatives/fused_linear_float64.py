# Style: gate and up fused into one F.linear and split with chunk; computed in float64 and cast back; __all__.
import torch
import torch.nn.functional as F

__all__ = ["swiglu_ffn", "swiglu_hidden_size"]


def swiglu_hidden_size(d_model: int, multiple_of: int) -> int:
    h = (8 * d_model) // 3
    remainder = h % multiple_of
    return h if remainder == 0 else h + multiple_of - remainder


def swiglu_ffn(x, w_gate, w_up, w_down):
    dtype = x.dtype
    fused = torch.cat([w_gate, w_up], dim=0).double()
    gate, up = F.linear(x.double(), fused).chunk(2, dim=-1)
    hidden = gate * torch.sigmoid(gate) * up
    return F.linear(hidden, w_down.double()).to(dtype)
