# Style: move the reduced axis to the end, work on the last axis, move it back; self-test block.
import torch


def _shift_by_row_max(x_last: torch.Tensor) -> torch.Tensor:
    """x with the largest entry of each last-axis row subtracted (so every entry is <= 0)."""
    row_max = x_last.max(dim=-1, keepdim=True).values
    return x_last - row_max


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return torch.empty_like(x)
    z = _shift_by_row_max(torch.movedim(x, dim, -1))
    e = torch.exp(z)  # the row maximum maps to exp(0) = 1, so the sum is in [1, n]
    p = e / e.sum(dim=-1, keepdim=True)
    return torch.movedim(p, -1, dim)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return torch.empty_like(x)
    z = _shift_by_row_max(torch.movedim(x, dim, -1))
    log_norm = torch.log(torch.exp(z).sum(dim=-1, keepdim=True))  # log of a number >= 1
    return torch.movedim(z - log_norm, -1, dim)


if __name__ == "__main__":
    x = torch.tensor([[1.0, 2.0, 3.0], [1000.0, 1000.0, -1000.0]])
    print(softmax(x, dim=-1))
    print(log_softmax(x, dim=-1))
    print(softmax(x, dim=0))
    print(softmax(torch.zeros(2, 0)).shape)
