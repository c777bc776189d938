# Style: the input projection of every time step computed at once before the loop; only the recurrent matmul stays inside; own helper for the gates.
import torch


def _gates_to_state(pre, c):
    i, f, g, o = pre.chunk(4, dim=-1)
    c_new = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    h_new = torch.sigmoid(o) * torch.tanh(c_new)
    return h_new, c_new


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    pre = torch.addmm(b_ih, x, w_ih.t()) + torch.addmm(b_hh, h, w_hh.t())
    return _gates_to_state(pre, c)


def lstm(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    B, T, _ = x.shape
    # (B, T, 4H): x_t W_ih^T + b_ih + b_hh for all t in one product
    x_proj = torch.matmul(x, w_ih.t()) + (b_ih + b_hh)
    h, c = h0, c0
    outputs = []
    for t in range(T):
        h, c = _gates_to_state(x_proj[:, t] + h.mm(w_hh.t()), c)
        outputs.append(h.unsqueeze(1))
    if T == 0:
        return h0.new_zeros(B, 0, h0.shape[-1]), (h0, c0)
    return torch.cat(outputs, dim=1), (h, c)
