# Bug: merge moves the mean by delta * n_a / n instead of delta * n_b / n, so the merged mean leans towards the smaller group whenever the counts differ.
import torch


def chunk_stats(x):
    # float64 from the start: a float32 sum of squared deviations loses digits fast.
    x = x.to(torch.float64)
    n = x.shape[0]
    if n == 0:
        zeros = torch.zeros(x.shape[1], dtype=torch.float64, device=x.device)
        return 0, zeros, zeros.clone()
    mean = x.mean(dim=0)
    # Deviations from the chunk's own mean (two passes over a chunk that fits in memory),
    # never sum(x^2) - n * mean^2, which cancels catastrophically when |mean| >> std.
    m2 = (x - mean).square().sum(dim=0)
    return n, mean, m2


def merge(a, b):
    n_a, mean_a, m2_a = a
    n_b, mean_b, m2_b = b
    n = n_a + n_b
    if n == 0:
        return 0, mean_a.clone(), m2_a.clone()
    # Chan et al.'s pairwise update: the means move by a weighted share of their difference,
    # and the spread between the two groups adds delta^2 * n_a * n_b / n to M2.
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_a / n)
    m2 = m2_a + m2_b + delta.square() * (n_a * n_b / n)
    return n, mean, m2


def stream_stats(chunks, unbiased=False):
    features = chunks[0].shape[1]
    zeros = torch.zeros(features, dtype=torch.float64, device=chunks[0].device)
    total = (0, zeros, zeros.clone())
    for x in chunks:  # one chunk in memory at a time
        total = merge(total, chunk_stats(x))
    n, mean, m2 = total
    if n == 0:
        return torch.full_like(mean, torch.nan), torch.full_like(mean, torch.nan)
    # With one row the unbiased estimate is 0 / 0: NaN, as torch.std gives.
    var = m2 / (n - 1) if unbiased else m2 / n
    return mean, var.sqrt()
