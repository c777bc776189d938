# Bug: The ranks are the plain positions in the sorted order (torch.argsort of the argsort, 1 to N) with no averaging over ties, so a positive tied with a negative counts as a full win or a full loss depending on the sort's order instead of one half.
import torch


def auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    scores = scores.to(torch.float64)
    positive = labels == 1
    n_pos = positive.sum().to(torch.float64)
    n_neg = scores.numel() - n_pos
    # Rank every score once (O(N log N)): the Mann-Whitney U of the positives is the sum of
    # their ranks minus the smallest possible sum, n_pos (n_pos + 1) / 2.
    sorted_scores, order = torch.sort(scores)
    # The i-th smallest score has rank i + 1.
    ranks = torch.arange(1, scores.numel() + 1, dtype=torch.float64)
    rank_sum = ranks[positive[order]].sum()
    u = rank_sum - n_pos * (n_pos + 1) / 2
    # With no positive or no negative there are no pairs: 0 / 0 gives NaN, as stated.
    return u / (n_pos * n_neg)
