# Bug: There is no guard for empty tensors, so reducing along a dimension of size 0 calls amax on it and raises; a correct version returns an empty result of the same shape.
import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # Subtracting the maximum changes nothing mathematically (it cancels between numerator
    # and denominator) and makes the largest exponent exp(0) = 1: nothing overflows.
    shifted = x - x.amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # log softmax = x - logsumexp(x), with the same shift inside the logsumexp.
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()
