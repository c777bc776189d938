# Style: torch.unique(return_inverse, return_counts) maps each sample to its group of equal
# scores; the average rank of a group is (number below) + (size + 1) / 2. A self-test block.
import torch

__all__ = ["auroc"]


def auroc(scores, labels):
    _, inverse, counts = torch.unique(scores.double(), return_inverse=True, return_counts=True)
    counts = counts.double()
    below = torch.cumsum(counts, 0) - counts  # samples with a strictly smaller score
    mid_rank = below + (counts + 1) / 2
    is_pos = labels.bool()
    p = is_pos.sum().double()
    q = labels.numel() - p
    rank_sum = mid_rank[inverse][is_pos].sum()
    return (rank_sum - p * (p + 1) / 2) / (p * q)


if __name__ == "__main__":
    print(auroc(torch.tensor([0.1, 0.4, 0.35, 0.8, 0.4]), torch.tensor([0, 0, 1, 1, 1])))  # 0.75
