# Style: my own stable log-sum-exp by subtracting the row max; uses the identity
# mean_c(-log p_c) = lse - mean_c(z), with helpers for the per-row terms and the reduction.
import torch


def _logsumexp_rows(z: torch.Tensor) -> torch.Tensor:
    top = z.max(dim=1, keepdim=True).values.detach()
    return (z - top).exp().sum(dim=1).log() + top.squeeze(1)


def _reduce(losses: torch.Tensor, counted: torch.Tensor, reduction: str) -> torch.Tensor:
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / counted.sum().to(losses.dtype)


def cross_entropy(
    logits: torch.Tensor,
    target: torch.Tensor,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
    reduction: str = "mean",
) -> torch.Tensor:
    counted = target.ne(ignore_index)
    index = target.masked_fill(~counted, 0)
    lse = _logsumexp_rows(logits)  # (N,)
    z_target = logits[torch.arange(logits.shape[0]), index]
    nll = lse - z_target  # -log p_target
    smooth = lse - logits.mean(dim=1)  # mean over classes of -log p_c
    losses = (1 - label_smoothing) * nll + label_smoothing * smooth
    losses = losses.masked_fill(~counted, 0.0)
    return _reduce(losses, counted, reduction)
