# Bug: softmax subtracts the maximum from x in place (x -= max), overwriting the caller's logits (and failing on a tensor that requires grad); a correct version builds a shifted copy.
import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # Subtracting the maximum changes nothing mathematically (it cancels between numerator
    # and denominator) and makes the largest exponent exp(0) = 1: nothing overflows.
    if x.numel() == 0:
        return x.clone()
    shifted = x
    shifted -= x.amax(dim=dim, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # log softmax = x - logsumexp(x), with the same shift inside the logsumexp.
    if x.numel() == 0:
        return x.clone()
    shifted = x - x.amax(dim=dim, keepdim=True)
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()
