# Style: unfold, then the product written as an einsum over the patch dimension; self-test.
import torch
import torch.nn.functional as F


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d(x, weight, bias=None, stride=1, padding=0):
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    n, _, h, w = x.shape
    o, _, kh, kw = weight.shape
    h_out = (h + 2 * ph - kh) // sh + 1
    w_out = (w + 2 * pw - kw) // sw + 1
    cols = F.unfold(x, (kh, kw), padding=(ph, pw), stride=(sh, sw))  # (N, C*kh*kw, L)
    out = torch.einsum("ok,nkl->nol", weight.reshape(o, -1), cols)
    if bias is not None:
        out = out + bias[None, :, None]
    return out.reshape(n, o, h_out, w_out)


if __name__ == "__main__":
    x = torch.arange(16.0).reshape(1, 1, 4, 4)
    w = torch.tensor([[[[1.0, 0.0], [0.0, -1.0]]]])
    print(conv2d(x, w, stride=2))  # all -5
    print(conv2d(torch.ones(2, 3, 5, 4), torch.ones(4, 3, 3, 2), torch.arange(4.0),
                 stride=(2, 1), padding=(1, 0)).shape)  # (2, 4, 3, 3)
