# Style: explicit outer loop over windows of k steps and inner loop over their steps, own helpers, a __main__ self-test.
import torch


def _linear(v, w, b):
    return v @ w.t() + b


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    w_ir, w_iz, w_in = w_ih.chunk(3, dim=0)
    w_hr, w_hz, w_hn = w_hh.chunk(3, dim=0)
    b_ir, b_iz, b_in = b_ih.chunk(3)
    b_hr, b_hz, b_hn = b_hh.chunk(3)
    r = torch.sigmoid(_linear(x, w_ir, b_ir) + _linear(h, w_hr, b_hr))
    z = torch.sigmoid(_linear(x, w_iz, b_iz) + _linear(h, w_hz, b_hz))
    n = torch.tanh(_linear(x, w_in, b_in) + r * _linear(h, w_hn, b_hn))
    return (1 - z) * n + z * h


def _windows(T, k):
    """(start, stop) of each window of at most k steps."""
    start = 0
    while start < T:
        yield start, min(start + k, T)
        start += k


def gru_tbptt(x, h0, w_ih, w_hh, b_ih, b_hh, k):
    B, T, _ = x.shape
    h = h0
    steps = []
    for start, stop in _windows(T, k):
        if start > 0:
            h = h.detach()          # the cut: nothing before `start` is reached from here on
        for t in range(start, stop):
            h = gru_cell(x[:, t, :], h, w_ih, w_hh, b_ih, b_hh)
            steps.append(h.unsqueeze(1))
    if not steps:
        return h0.new_empty(B, 0, h0.shape[-1])
    return torch.cat(steps, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, I, H = 2, 5, 3, 4
    x = torch.randn(B, T, I, requires_grad=True)
    h0 = torch.randn(B, H)
    w = [torch.randn(3 * H, I), torch.randn(3 * H, H), torch.randn(3 * H), torch.randn(3 * H)]
    out = gru_tbptt(x, h0, *w, k=2)
    g = torch.autograd.grad(out[:, 3].sum(), x)[0]
    print("grad on steps 0,1 (k=2):", g[:, :2].abs().max().item())
    out_full = gru_tbptt(x, h0, *w, k=5)
    g_full = torch.autograd.grad(out_full[:, 3].sum(), x)[0]
    print("grad on steps 0,1 (k=5):", g_full[:, :2].abs().max().item())
    print("same forward values:", torch.allclose(out, out_full))
