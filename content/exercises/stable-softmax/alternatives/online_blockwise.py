# Style: one-pass "online" log-sum-exp over blocks of the axis (flash-attention style running max).
import torch

_BLOCK = 256


def _online_max_and_log_sum(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(m, log(sum(exp(x - m)))) along dim, keepdim, built block by block with a running max.

    The two parts are kept apart: adding them first would round the result to the scale
    of m (a logit of 1000 has a float32 spacing of 6e-5).
    """
    running_max = None
    running_sum = None
    for block in torch.split(x, _BLOCK, dim=dim):
        block_max = block.amax(dim=dim, keepdim=True)
        if running_max is None:
            running_max = block_max
            running_sum = torch.exp(block - block_max).sum(dim=dim, keepdim=True)
            continue
        new_max = torch.maximum(running_max, block_max)
        running_sum = running_sum * torch.exp(running_max - new_max) + torch.exp(
            block - new_max
        ).sum(dim=dim, keepdim=True)
        running_max = new_max
    return running_max, torch.log(running_sum)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.clone()
    m, log_sum = _online_max_and_log_sum(x, dim)
    return (x - m) - log_sum


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    if x.numel() == 0:
        return x.clone()
    return torch.exp(log_softmax(x, dim))
