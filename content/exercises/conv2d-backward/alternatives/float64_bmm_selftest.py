# Style: float64 inside with explicit transposes and matmul/bmm, cast back to the input
# dtypes at the end; self-test block with the statement's example.
import torch
import torch.nn.functional as F


def conv2d_backward(x, weight, grad_out, stride=1, padding=0):
    if isinstance(stride, int):
        stride = (stride, stride)
    if isinstance(padding, int):
        padding = (padding, padding)
    N, C, H, W = x.shape
    O, _, kh, kw = weight.shape

    xd, wd, gd = x.double(), weight.double(), grad_out.double()
    cols = F.unfold(xd, kernel_size=(kh, kw), padding=padding, stride=stride)  # (N, K, L)
    K, L = cols.shape[1], cols.shape[2]
    dy = gd.reshape(N, O, L)
    w_mat = wd.reshape(O, K)

    # dW = sum_n dY_n @ cols_n^T
    d_w = torch.bmm(dy, cols.transpose(1, 2)).sum(dim=0)  # (O, K)
    # dcols_n = W^T @ dY_n, then scatter-add columns back into the image
    d_cols = w_mat.t().unsqueeze(0).expand(N, K, O).bmm(dy)  # (N, K, L)
    d_x = F.fold(d_cols, output_size=(H, W), kernel_size=(kh, kw), padding=padding,
                 stride=stride)
    d_b = dy.sum(dim=(0, 2))
    return d_x.to(x.dtype), d_w.reshape(O, C, kh, kw).to(weight.dtype), d_b.to(grad_out.dtype)


if __name__ == "__main__":
    x = torch.ones(1, 1, 3, 3)
    w = torch.ones(1, 1, 2, 2)
    gx, gw, gb = conv2d_backward(x, w, torch.ones(1, 1, 2, 2))
    print(gx)  # [[1, 2, 1], [2, 4, 2], [1, 2, 1]]
    print(gw, gb)  # all 4, [4]
