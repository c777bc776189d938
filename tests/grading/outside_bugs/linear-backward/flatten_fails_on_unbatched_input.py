# Bug: The leading dimensions are flattened with flatten(0, -2), which fails for an unbatched 1-D x of shape (in_features,); a correct version reshapes to (-1, in_features), which handles no leading dims.
def linear_backward(x, weight, bias, grad_out):
    out_features, in_features = weight.shape
    # y = x W^T + b, so dL/dx = dL/dy W: a (*, out) by (out, in) product, any leading dims.
    grad_x = grad_out @ weight
    # Every batch position used the same W and b: their gradients sum over all of them.
    # Flattening the leading dims makes that one (out, N) by (N, in) product.
    flat_x = x.flatten(0, -2)
    flat_g = grad_out.flatten(0, -2)
    grad_weight = flat_g.T @ flat_x
    grad_bias = flat_g.sum(dim=0) if bias is not None else None
    return grad_x, grad_weight, grad_bias
