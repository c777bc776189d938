# Style: review solution from the statement alone; a context manager that saves and restores every module's flag, empty batches skipped.
import contextlib
import math

import torch
import torch.nn.functional as F


@contextlib.contextmanager
def _eval_mode(model):
    flags = {m: m.training for m in model.modules()}
    model.eval()
    try:
        yield
    finally:
        for m, flag in flags.items():
            m.training = flag


def evaluate(model, batches):
    total_loss = 0.0
    correct = 0
    count = 0
    with _eval_mode(model), torch.inference_mode():
        for x, y in batches:
            if x.shape[0] == 0:
                continue
            logits = model(x)
            total_loss += F.cross_entropy(logits, y, reduction="sum").item()
            correct += int((logits.argmax(dim=1) == y).sum())
            count += y.shape[0]
    if count == 0:
        return math.nan, math.nan
    return total_loss / count, correct / count
