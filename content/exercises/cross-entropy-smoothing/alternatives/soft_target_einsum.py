# Style: build the smoothed target distribution q explicitly (one_hot * (1 - eps) + eps / C)
# and take the loss as an einsum of q with -log p; ignored rows get q = 0.
import torch
import torch.nn.functional as F


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    n, num_classes = logits.shape
    valid = target != ignore_index
    classes = torch.where(valid, target, 0)
    q = F.one_hot(classes, num_classes).to(logits.dtype) * (1.0 - label_smoothing)
    q = q + label_smoothing / num_classes
    q = q * valid.unsqueeze(1).to(logits.dtype)
    neg_logp = -(logits - torch.logsumexp(logits, dim=1, keepdim=True))
    losses = torch.einsum("nc,nc->n", q, neg_logp)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    if reduction == "mean":
        return losses.sum() / valid.sum()
    raise ValueError(reduction)
