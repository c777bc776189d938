# Style: a loop over the sequences of the batch, summing each one's kept losses, pooled at the end.
import torch


def causal_lm_loss(logits, tokens, ignore_index=-100):
    total = logits.new_zeros(())
    count = 0
    for seq_logits, seq in zip(logits, tokens):
        inputs, targets = seq_logits[:-1], seq[1:]
        kept = (targets != ignore_index).nonzero().flatten()
        if kept.numel() == 0:
            total = total + 0.0 * seq_logits.sum()
            continue
        rows = inputs[kept]
        lse = torch.logsumexp(rows, dim=1)
        total = total + (lse - rows.gather(1, targets[kept][:, None])[:, 0]).sum()
        count += kept.numel()
    loss = total / max(count, 1)
    return loss, torch.exp(loss)
