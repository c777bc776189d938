# Bug: The product is taken as cols^T @ W^T, giving (N, L, O), and reshaped straight to (N, O, H_out, W_out) without moving the channel axis first, so channels and positions are scrambled whenever O > 1; a correct version computes W @ cols (N, O, L) or transposes before reshaping.
import torch.nn.functional as F


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d(x, weight, bias=None, stride=1, padding=0):
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    h_out = (h + 2 * ph - kh) // sh + 1
    w_out = (w + 2 * pw - kw) // sw + 1
    # (N, C*kh*kw, L): unfold orders each column channel-major, then kernel rows, then
    # columns, the same order as weight.reshape(O, -1).
    cols = F.unfold(x, (kh, kw), padding=(ph, pw), stride=(sh, sw))
    out = cols.transpose(1, 2) @ weight.reshape(o, -1).T
    out = out.reshape(n, o, h_out, w_out)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out
