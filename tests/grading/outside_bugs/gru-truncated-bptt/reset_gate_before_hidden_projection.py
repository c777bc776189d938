# Bug: The reset gate multiplies h before the hidden projection (n = tanh(x W_in^T + b_in + (r*h) W_hn^T + b_hn)) instead of after it, bias included, which is not what nn.GRUCell computes.
import torch


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    i_r, i_z, i_n = (x @ w_ih.T + b_ih).chunk(3, dim=-1)
    h_r, h_z, _ = (h @ w_hh.T + b_hh).chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    w_hn, b_hn = w_hh.chunk(3, dim=0)[2], b_hh.chunk(3)[2]
    n = torch.tanh(i_n + (r * h) @ w_hn.T + b_hn)
    return (1 - z) * n + z * h


def gru_tbptt(x, h0, w_ih, w_hh, b_ih, b_hh, k):
    h = h0
    outputs = []
    for t in range(x.shape[1]):
        if t > 0 and t % k == 0:
            # Cut the graph: the values go on, the gradient stops here.
            h = h.detach()
        h = gru_cell(x[:, t], h, w_ih, w_hh, b_ih, b_hh)
        outputs.append(h)
    return torch.stack(outputs, dim=1)
