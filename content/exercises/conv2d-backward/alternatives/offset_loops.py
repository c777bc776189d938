# Style: explicit loops over the kh*kw kernel offsets on a zero-padded buffer (my own
# im2col / col2im by strided slices), each offset contributing a small einsum.
import torch


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d_backward(x, weight, grad_out, stride=1, padding=0):
    sh, sw = _pair(stride)
    ph, pw = _pair(padding)
    n, c, h, w = x.shape
    o, _, kh, kw = weight.shape
    h_out, w_out = grad_out.shape[2], grad_out.shape[3]

    padded = x.new_zeros(n, c, h + 2 * ph, w + 2 * pw)
    padded[:, :, ph:ph + h, pw:pw + w] = x
    grad_padded = torch.zeros_like(padded)
    grad_weight = torch.zeros_like(weight)

    for i in range(kh):
        rows = slice(i, i + sh * (h_out - 1) + 1, sh)
        for j in range(kw):
            cols = slice(j, j + sw * (w_out - 1) + 1, sw)
            # out[n, o, a, b] += sum_c W[o, c, i, j] * padded[n, c, i + sh*a, j + sw*b]
            patch = padded[:, :, rows, cols]  # (N, C, H_out, W_out)
            grad_weight[:, :, i, j] = torch.einsum("nohw,nchw->oc", grad_out, patch)
            grad_padded[:, :, rows, cols] += torch.einsum("nohw,oc->nchw", grad_out,
                                                          weight[:, :, i, j])

    grad_input = grad_padded[:, :, ph:ph + h, pw:pw + w].contiguous()
    grad_bias = grad_out.sum(dim=(0, 2, 3))
    return grad_input, grad_weight, grad_bias
