import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    e = x.exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return x - x.exp().sum(dim=dim, keepdim=True).log()
