# Style: flattens to (N, V) rows, log_softmax, boolean indexing of the kept rows; __all__.
import torch

__all__ = ["causal_lm_loss"]


def causal_lm_loss(logits, tokens, ignore_index=-100):
    vocab = logits.shape[-1]
    pred = logits[:, :-1].reshape(-1, vocab)
    target = tokens[:, 1:].reshape(-1)
    kept = target != ignore_index
    rows = pred[kept].log_softmax(dim=-1)
    picked = rows[torch.arange(rows.shape[0]), target[kept]]
    if picked.numel() == 0:
        loss = logits.sum() * 0.0
    else:
        loss = -picked.mean()
    return loss, loss.exp()
