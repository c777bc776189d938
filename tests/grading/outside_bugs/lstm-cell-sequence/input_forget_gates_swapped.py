# Bug: The gate chunks are unpacked as forget, input, cell, output instead of PyTorch's input, forget, cell, output, so the input and forget gates are swapped.
import torch


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    f, i, g, o = gates.chunk(4, dim=-1)  # PyTorch's order: input, forget, cell, output
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    # The cell state is updated additively: that path is what carries gradients far back.
    h = torch.sigmoid(o) * torch.tanh(c)
    return h, c


def lstm(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    h, c = h0, c0
    outputs = []
    for t in range(x.shape[1]):
        h, c = lstm_cell(x[:, t], h, c, w_ih, w_hh, b_ih, b_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1), (h, c)
