# Style: float64 inside; only the kept rows are selected and scored (log_softmax + indexing),
# then scattered back into a zero vector; cast back at the end; self-test block.
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    keep = target != ignore_index
    kept_logits = logits[keep].to(torch.float64)  # (K, C)
    kept_target = target[keep]  # (K,)
    logp = torch.log_softmax(kept_logits, dim=1)
    rows = torch.arange(kept_target.numel(), device=logits.device)
    nll = -logp[rows, kept_target]
    smooth = -logp.sum(dim=1) / logits.shape[1]
    kept_losses = (1.0 - label_smoothing) * nll + label_smoothing * smooth

    losses = torch.zeros(target.shape[0], dtype=torch.float64, device=logits.device)
    losses = losses.masked_scatter(keep, kept_losses)
    if reduction == "none":
        return losses.to(logits.dtype)
    if reduction == "sum":
        return kept_losses.sum().to(logits.dtype)
    if reduction == "mean":
        # an empty mean is NaN, as PyTorch gives when every position is ignored
        return kept_losses.mean().to(logits.dtype)
    raise ValueError(f"unknown reduction {reduction!r}")


if __name__ == "__main__":
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [5.0, 5.0, 5.0]])
    target = torch.tensor([0, 1, -100])
    print(cross_entropy(logits, target))  # tensor(0.3955)
    print(cross_entropy(logits, target, label_smoothing=0.3, reduction="none"))
    # tensor([0.6395, 0.7514, 0.0000])
    print(cross_entropy(logits, torch.full((3,), -100)))  # tensor(nan)
    print(cross_entropy(logits, torch.full((3,), -100), reduction="sum"))  # tensor(0.)
