# Style: einsum for the squared deviations, functools.reduce over the chunk summaries, __all__.
from functools import reduce

import torch

__all__ = ["chunk_stats", "merge", "stream_stats"]


def chunk_stats(x):
    x64 = x.double()
    count = int(x64.shape[0])
    if count == 0:
        return 0, x64.new_zeros(x64.shape[1]), x64.new_zeros(x64.shape[1])
    mean = x64.sum(dim=0) / count
    centred = x64 - mean
    return count, mean, torch.einsum("nf,nf->f", centred, centred)


def merge(a, b):
    (n_a, mean_a, m2_a), (n_b, mean_b, m2_b) = a, b
    total = n_a + n_b
    if total == 0:
        return 0, torch.zeros_like(mean_a), torch.zeros_like(m2_a)
    delta = mean_b - mean_a
    mean = (n_a * mean_a + n_b * mean_b) / total
    return total, mean, m2_a + m2_b + delta**2 * n_a * n_b / total


def stream_stats(chunks, unbiased=False):
    count, mean, m2 = reduce(merge, map(chunk_stats, chunks))
    if count == 0:
        return mean.fill_(float("nan")), m2.fill_(float("nan"))
    ddof = 1 if unbiased else 0
    return mean, (m2 / (count - ddof)).sqrt()
