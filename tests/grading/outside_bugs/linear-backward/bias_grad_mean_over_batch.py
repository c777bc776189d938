# Bug: grad_bias averages grad_out over the batch positions instead of summing them.
def linear_backward(x, weight, bias, grad_out):
    out_features, in_features = weight.shape
    # y = x W^T + b, so dL/dx = dL/dy W: a (*, out) by (out, in) product, any leading dims.
    grad_x = grad_out @ weight
    # Every batch position used the same W and b: their gradients sum over all of them.
    # Flattening the leading dims makes that one (out, N) by (N, in) product.
    flat_x = x.reshape(-1, in_features)
    flat_g = grad_out.reshape(-1, out_features)
    grad_weight = flat_g.T @ flat_x
    grad_bias = flat_g.mean(dim=0) if bias is not None else None
    return grad_x, grad_weight, grad_bias
