# Style: per-batch means weighted by batch size, flags keyed by id(); __main__ self-test.
import math

import torch
import torch.nn.functional as F
from torch import nn


def evaluate(model: nn.Module, batches: list) -> tuple[float, float]:
    was_training = {id(m): m.training for m in model.modules()}
    for m in model.modules():
        m.training = False
    weighted_loss = 0.0
    correct = 0.0
    n = 0
    try:
        for x, y in batches:
            b = y.shape[0]
            if b == 0:
                continue
            with torch.no_grad():
                logits = model(x)
                # A batch's mean times its size: the same as summing its examples' losses.
                weighted_loss += F.cross_entropy(logits, y).item() * b
                correct += (logits.max(dim=1).indices == y).float().sum().item()
            n += b
    finally:
        for m in model.modules():
            m.training = was_training[id(m)]
    return (weighted_loss / n, correct / n) if n else (math.nan, math.nan)


if __name__ == "__main__":
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Dropout(0.5), nn.Linear(4, 2))
    data = [(torch.randn(5, 3), torch.randint(0, 2, (5,))), (torch.randn(1, 3), torch.tensor([1]))]
    print(evaluate(net, data), net.training)
