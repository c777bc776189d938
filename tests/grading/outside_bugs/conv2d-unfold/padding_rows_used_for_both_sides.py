# Bug: unfold is given padding=ph for both axes, so an asymmetric padding pair (pad_h, pad_w) pads the columns by pad_h; the output then has the wrong width or wrong values, where a correct version passes (pad_h, pad_w).
import torch.nn.functional as F


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d(x, weight, bias=None, stride=1, padding=0):
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    h_out = (h + 2 * ph - kh) // sh + 1
    w_out = (w + 2 * ph - kw) // sw + 1
    # (N, C*kh*kw, L): unfold orders each column channel-major, then kernel rows, then
    # columns, the same order as weight.reshape(O, -1).
    cols = F.unfold(x, (kh, kw), padding=ph, stride=(sh, sw))
    out = weight.reshape(o, -1) @ cols
    out = out.reshape(n, o, h_out, w_out)
    if bias is not None:
        out = out + bias.reshape(1, o, 1, 1)
    return out
