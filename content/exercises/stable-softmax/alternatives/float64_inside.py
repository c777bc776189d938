# Style: compute in float64 internally with amax/keepdim reductions, cast back to the input dtype.
import torch


def _centered64(x: torch.Tensor, dim: int) -> torch.Tensor:
    x64 = x.to(torch.float64)
    return x64 - torch.amax(x64, dim=dim, keepdim=True)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.clone()
    e = torch.exp(_centered64(x, dim))
    return (e / torch.sum(e, dim=dim, keepdim=True)).to(x.dtype)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.clone()
    c = _centered64(x, dim)
    return (c - torch.log(torch.sum(torch.exp(c), dim=dim, keepdim=True))).to(x.dtype)
