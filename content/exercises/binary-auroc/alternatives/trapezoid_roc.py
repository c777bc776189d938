# Style: the ROC curve itself: cumulative true and false positives at each distinct threshold
# (scores sorted high to low, tied scores taken together), area by the trapezoidal rule.
import torch


def auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    s, order = torch.sort(scores.to(torch.float64), descending=True)
    y = labels[order].to(torch.float64)
    distinct, counts = torch.unique_consecutive(s, return_counts=True)
    group_ends = torch.cumsum(counts, 0) - 1
    tp = torch.cumsum(y, 0)[group_ends]
    fp = torch.cumsum(1 - y, 0)[group_ends]
    zero = torch.zeros(1, dtype=torch.float64)
    tp = torch.cat([zero, tp])
    fp = torch.cat([zero, fp])
    tpr = tp / tp[-1]
    fpr = fp / fp[-1]
    if distinct.numel() == 0:
        return torch.tensor(float("nan"), dtype=torch.float64)
    return torch.trapezoid(tpr, fpr)
