# Bug: The loss is the mean of the per-batch mean losses, so a small last batch weighs as much as a full one instead of counting for its size.
import math

import torch
import torch.nn.functional as F


def evaluate(model, batches):
    # Remember every module's own flag: a model may keep some layers in eval mode on purpose
    # (a frozen BatchNorm while fine-tuning), and model.train(True) would flip them too.
    modes = [(module, module.training) for module in model.modules()]
    model.eval()  # dropout off, batch norm normalises with its running statistics
    total_loss, correct, count, nonempty = 0.0, 0, 0, 0
    try:
        # No graph is recorded and no activation is kept for a backward that never comes.
        with torch.inference_mode():
            for x, y in batches:
                logits = model(x)
                # Summed, not averaged, per batch: the last batch is often smaller, and the
                # mean over the dataset weighs every example once.
                if y.shape[0]:
                    total_loss += F.cross_entropy(logits, y).item()
                    nonempty += 1
                correct += (logits.argmax(dim=1) == y).sum().item()
                count += y.shape[0]
    finally:
        # Restored even when a batch raises, so an evaluation never leaves training in eval.
        for module, training in modes:
            module.training = training
    if count == 0:
        return math.nan, math.nan
    return total_loss / nonempty, correct / count
