# Style: einsum projections; sigmoid written through tanh, sigmoid(g) = (1 + tanh(g / 2)) / 2; math.ceil for the width.
import math

import torch


def swiglu_hidden_size(d_model, multiple_of):
    hidden = int(2 * (4 * d_model) / 3)
    return int(math.ceil(hidden / multiple_of) * multiple_of)


def swiglu_ffn(x, w_gate, w_up, w_down):
    gate = torch.einsum("...d,hd->...h", x, w_gate)
    up = torch.einsum("...d,hd->...h", x, w_up)
    silu = gate * 0.5 * (1.0 + torch.tanh(0.5 * gate))
    return torch.einsum("...h,dh->...d", silu * up, w_down)
