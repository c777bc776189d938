# Bug: The loss is the mean of per-sequence means (each row's summed NLL over its own count of targets, then averaged over the batch), which weights a short sequence's tokens more than a long one's; the statement asks for one mean over all counted targets.
import torch


def causal_lm_loss(logits, tokens, ignore_index=-100):
    # Position t predicts token t + 1: drop the last prediction and the first token.
    pred = logits[:, :-1, :]
    target = tokens[:, 1:]
    # log p = x - logsumexp(x) never exponentiates a large logit.
    log_probs = pred - torch.logsumexp(pred, dim=-1, keepdim=True)
    keep = target != ignore_index
    # An ignored target (-100) is no valid index: gather at class 0, then mask it away.
    safe = torch.where(keep, target, torch.zeros_like(target))
    nll = -log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    nll = torch.where(keep, nll, torch.zeros_like(nll))
    # Mean over the targets that count; with none, the loss is 0 (not 0 / 0), still
    # attached to the logits so that backward() runs and gives zero gradients.
    count = keep.sum(dim=1).clamp_min(1).to(nll.dtype)
    loss = (nll.sum(dim=1) / count).mean()
    return loss, torch.exp(loss)
