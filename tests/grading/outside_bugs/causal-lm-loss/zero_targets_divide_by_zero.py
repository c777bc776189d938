# Bug: The loss divides the masked sum by the number of counted targets with no floor at 1, so with no target (T = 1 or every target ignored) it is 0 / 0 = NaN instead of 0, and the perplexity NaN instead of 1.
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
    count = keep.sum().to(nll.dtype)
    loss = nll.sum() / count
    return loss, torch.exp(loss)
