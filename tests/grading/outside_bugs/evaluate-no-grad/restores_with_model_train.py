# Bug: Only the top module's flag is remembered and restored with model.train(was_training), which also puts a batch norm that was frozen in eval mode inside a training model back into training mode.
import math

import torch
import torch.nn.functional as F


def evaluate(model, batches):
    # Remember every module's own flag: a model may keep some layers in eval mode on purpose
    # (a frozen BatchNorm while fine-tuning), and model.train(True) would flip them too.
    was_training = model.training
    model.eval()  # dropout off, batch norm normalises with its running statistics
    total_loss, correct, count = 0.0, 0, 0
    try:
        # No graph is recorded and no activation is kept for a backward that never comes.
        with torch.inference_mode():
            for x, y in batches:
                logits = model(x)
                # Summed, not averaged, per batch: the last batch is often smaller, and the
                # mean over the dataset weighs every example once.
                total_loss += F.cross_entropy(logits, y, reduction="sum").item()
                correct += (logits.argmax(dim=1) == y).sum().item()
                count += y.shape[0]
    finally:
        # Restored even when a batch raises, so an evaluation never leaves training in eval.
        model.train(was_training)
    if count == 0:
        return math.nan, math.nan
    return total_loss / count, correct / count
