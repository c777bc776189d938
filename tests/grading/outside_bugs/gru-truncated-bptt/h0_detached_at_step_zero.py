# Bug: The cut condition t % k == 0 also fires at t = 0, so h0 is detached and no gradient reaches it; a correct version cuts only at positive multiples of k, so the first window's outputs still depend on h0.
import torch


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    i_r, i_z, i_n = (x @ w_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, h_n = (h @ w_hh.T + b_hh).chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    # PyTorch applies the reset gate after the hidden projection, bias included.
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


def gru_tbptt(x, h0, w_ih, w_hh, b_ih, b_hh, k):
    h = h0
    outputs = []
    for t in range(x.shape[1]):
        if t % k == 0:
            # Cut the graph: the values go on, the gradient stops here.
            h = h.detach()
        h = gru_cell(x[:, t], h, w_ih, w_hh, b_ih, b_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1)
