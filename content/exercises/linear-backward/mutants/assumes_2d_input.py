def linear_backward(x, weight, bias, grad_out):
    grad_x = grad_out @ weight
    # Written for x of shape (N, in) only: leading dims (B, T, in) or a lone sample (in,)
    # are not flattened, so the batch is not summed over correctly.
    grad_weight = grad_out.mT @ x
    grad_bias = grad_out.sum(dim=0) if bias is not None else None
    return grad_x, grad_weight, grad_bias
