# Bug: Tied scores all get the highest rank of their group (the group's end) instead of the average, so a positive tied with a negative counts as a full win rather than one half.
import torch


def auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    scores = scores.to(torch.float64)
    positive = labels == 1
    n_pos = positive.sum().to(torch.float64)
    n_neg = scores.numel() - n_pos
    # Rank every score once (O(N log N)): the Mann-Whitney U of the positives is the sum of
    # their ranks minus the smallest possible sum, n_pos (n_pos + 1) / 2.
    sorted_scores, order = torch.sort(scores)
    # Tied scores share the average of the ranks they span, so that a positive tied with a
    # negative wins half a comparison.
    _, counts = torch.unique_consecutive(sorted_scores, return_counts=True)
    last = torch.cumsum(counts, dim=0).to(torch.float64)  # 1-based rank of each group's end
    first = last - counts + 1
    ranks = torch.repeat_interleave(last, counts)
    rank_sum = ranks[positive[order]].sum()
    u = rank_sum - n_pos * (n_pos + 1) / 2
    # With no positive or no negative there are no pairs: 0 / 0 gives NaN, as stated.
    return u / (n_pos * n_neg)
