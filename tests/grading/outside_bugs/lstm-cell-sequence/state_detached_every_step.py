# Bug: The hidden and cell states are detached after every step, so the forward values are right but no gradient flows back through time (to earlier inputs, h0, c0 or through the recurrence); a correct LSTM keeps the states attached.
import torch


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    i, f, g, o = gates.chunk(4, dim=-1)  # PyTorch's order: input, forget, cell, output
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
        h, c = h.detach(), c.detach()
    return torch.stack(outputs, dim=1), (h, c)
