# Style: sort the negatives once, then binary-search every positive among them: the negatives
# strictly below it and those equal to it, O(N log N) without ranks.
import torch


def auroc(scores, labels):
    s = scores.double()
    pos = s[labels == 1]
    neg, _ = torch.sort(s[labels == 0])
    below = torch.searchsorted(neg, pos, right=False).double()  # negatives < positive
    below_or_tied = torch.searchsorted(neg, pos, right=True).double()  # negatives <= positive
    wins = (below + below_or_tied).sum() / 2  # below + half of the ties
    return wins / (pos.numel() * neg.numel())
