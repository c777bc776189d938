# Bug: The maximum and the sum are taken without keepdim and unsqueezed at the last dimension, so for any dim other than the last they broadcast along the wrong axis; a correct version keeps the reduced dimension in place (keepdim=True).
import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # Subtracting the maximum changes nothing mathematically (it cancels between numerator
    # and denominator) and makes the largest exponent exp(0) = 1: nothing overflows.
    if x.numel() == 0:
        return x.clone()
    shifted = x - x.amax(dim=dim).unsqueeze(-1)
    e = shifted.exp()
    return e / e.sum(dim=dim).unsqueeze(-1)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # log softmax = x - logsumexp(x), with the same shift inside the logsumexp.
    if x.numel() == 0:
        return x.clone()
    shifted = x - x.amax(dim=dim).unsqueeze(-1)
    return shifted - shifted.exp().sum(dim=dim).unsqueeze(-1).log()
