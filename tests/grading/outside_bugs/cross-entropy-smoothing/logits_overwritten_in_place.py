# Bug: The log-softmax is taken in place (logits -= logsumexp), overwriting the caller's logits tensor (and failing outright on a leaf that requires grad); a correct version builds a new tensor.
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    # log p = x - logsumexp(x): stable for logits in the thousands, unlike log(softmax(x)).
    log_probs = logits
    log_probs -= torch.logsumexp(logits, dim=-1, keepdim=True)
    keep = target != ignore_index
    # Ignored targets may be any integer (-100): index with a safe class, then zero them.
    safe = torch.where(keep, target, torch.zeros_like(target))
    nll = -log_probs.gather(-1, safe[:, None]).squeeze(-1)
    # Smoothing spreads eps over all C classes (the target included): eps * mean(-log p).
    uniform = -log_probs.mean(dim=-1)
    losses = (1.0 - label_smoothing) * nll + label_smoothing * uniform
    losses = torch.where(keep, losses, torch.zeros_like(losses))
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    # The mean counts only the positions that count: 0 / 0 = NaN when none does.
    return losses.sum() / keep.sum().to(losses.dtype)
