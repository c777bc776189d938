# Style: computed in float64 inside, cast back to the input dtype; gates sliced by index ranges; hidden states gathered with torch.cat.
import torch
import torch.nn.functional as F


def _cell64(x, h, w_ih, w_hh, b_ih, b_hh):
    H = h.shape[-1]
    gi = F.linear(x, w_ih, b_ih)
    gh = F.linear(h, w_hh, b_hh)
    reset = torch.sigmoid(gi[:, :H] + gh[:, :H])
    update = torch.sigmoid(gi[:, H:2 * H] + gh[:, H:2 * H])
    cand = torch.tanh(gi[:, 2 * H:] + reset * gh[:, 2 * H:])
    return torch.lerp(cand, h, update)          # cand + update * (h - cand)


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    d = torch.float64
    out = _cell64(x.to(d), h.to(d), w_ih.to(d), w_hh.to(d), b_ih.to(d), b_hh.to(d))
    return out.to(h.dtype)


def gru_tbptt(x, h0, w_ih, w_hh, b_ih, b_hh, k):
    d = torch.float64
    xs, W_i, W_h, B_i, B_h = (t.to(d) for t in (x, w_ih, w_hh, b_ih, b_hh))
    h = h0.to(d)
    hs = [h0.new_empty(x.shape[0], 0, h0.shape[-1], dtype=d)]
    for t in range(x.shape[1]):
        if t and t % k == 0:
            h = h.detach()
        h = _cell64(xs[:, t], h, W_i, W_h, B_i, B_h)
        hs.append(h.unsqueeze(1))
    return torch.cat(hs, dim=1).to(h0.dtype)
