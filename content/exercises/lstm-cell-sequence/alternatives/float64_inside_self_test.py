# Style: float64 inside, cast back to the input dtype; gates as four row-blocks of the weights; a __main__ self-test (shapes, last output, one step).
import torch


def _step64(x, h, c, w_ih, w_hh, b_ih, b_hh):
    H = h.shape[-1]
    blocks = []
    for j in range(4):                          # input, forget, cell, output
        rows = slice(j * H, (j + 1) * H)
        blocks.append(x @ w_ih[rows].T + b_ih[rows] + h @ w_hh[rows].T + b_hh[rows])
    in_gate = torch.sigmoid(blocks[0])
    forget_gate = torch.sigmoid(blocks[1])
    candidate = torch.tanh(blocks[2])
    out_gate = torch.sigmoid(blocks[3])
    c_new = forget_gate * c + in_gate * candidate
    return out_gate * torch.tanh(c_new), c_new


def _f64(*ts):
    return [t.to(torch.float64) for t in ts]


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    h2, c2 = _step64(*_f64(x, h, c, w_ih, w_hh, b_ih, b_hh))
    return h2.to(h.dtype), c2.to(c.dtype)


def lstm(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
    x64, h, c, *w = _f64(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    seq = []
    for t in range(x64.shape[1]):
        h, c = _step64(x64[:, t, :], h, c, *w)
        seq.append(h)
    output = torch.stack(seq, 1) if seq else h.new_zeros(x.shape[0], 0, h.shape[-1])
    return output.to(x.dtype), (h.to(h0.dtype), c.to(c0.dtype))


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, I, H = 2, 4, 3, 5
    w_ih, w_hh = torch.randn(4 * H, I) * 0.4, torch.randn(4 * H, H) * 0.4
    b_ih, b_hh = torch.randn(4 * H) * 0.1, torch.randn(4 * H) * 0.1
    x, h0, c0 = torch.randn(B, T, I), torch.randn(B, H), torch.randn(B, H)
    out, (h, c) = lstm(x, h0, c0, w_ih, w_hh, b_ih, b_hh)
    print(out.shape, h.shape, c.shape)
    print("last output == h_n:", torch.equal(out[:, -1], h))
    h1, c1 = lstm_cell(x[:, 0], h0, c0, w_ih, w_hh, b_ih, b_hh)
    print("first step == cell:", torch.allclose(out[:, 0], h1, atol=1e-6))
