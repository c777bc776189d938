# Style: flattens the leading dims to rows and restores them; stable SiLU by where on the sign; a __main__ self-test.
import torch


def swiglu_hidden_size(d_model, multiple_of):
    h = d_model * 8 // 3
    blocks = -(-h // multiple_of)
    return blocks * multiple_of


def _silu(g):
    # Only exp of non-positive numbers: e = exp(-|g|) never overflows.
    e = torch.exp(-g.abs())
    sig = torch.where(g >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return g * sig


def swiglu_ffn(x, w_gate, w_up, w_down):
    lead = x.shape[:-1]
    rows = x.reshape(-1, x.shape[-1])
    h = _silu(rows.matmul(w_gate.t())) * rows.matmul(w_up.t())
    return h.matmul(w_down.t()).reshape(*lead, w_down.shape[0])


if __name__ == "__main__":
    x = torch.randn(2, 3, 4)
    w = torch.randn(5, 4)
    print(swiglu_ffn(x, w, w, torch.randn(4, 5)).shape, swiglu_hidden_size(4096, 256))
