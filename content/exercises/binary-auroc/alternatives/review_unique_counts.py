# Style: torch.unique groups equal scores; per-value counts of positives and negatives, each positive beating the negatives below and tying half of those at its value.
import torch


def auroc(scores, labels):
    # Group equal scores with torch.unique (sorted): for each distinct value, count the
    # positives and negatives there; a positive beats every negative at a lower value and
    # ties half of those at its own value.
    values, inverse = torch.unique(scores, sorted=True, return_inverse=True)
    k = values.numel()
    pos_mask = labels == 1
    pos = torch.bincount(inverse[pos_mask], minlength=k).to(torch.float64)
    neg = torch.bincount(inverse[~pos_mask], minlength=k).to(torch.float64)
    p, q = pos.sum(), neg.sum()
    if p.item() == 0 or q.item() == 0:
        return torch.tensor(float("nan"), dtype=torch.float64, device=scores.device)
    neg_below = torch.cumsum(neg, 0) - neg
    wins = (pos * (neg_below + 0.5 * neg)).sum()
    return wins / (p * q)


if __name__ == "__main__":
    print(auroc(torch.tensor([0.1, 0.4, 0.35, 0.8, 0.4]), torch.tensor([0, 0, 1, 1, 1])))
    print(auroc(torch.tensor([0.5, 0.5]), torch.tensor([1, 0])))
    print(auroc(torch.tensor([0.2, 0.7]), torch.tensor([1, 1])))
