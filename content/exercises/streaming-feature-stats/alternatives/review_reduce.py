# Style: review solution from the statement alone; functools.reduce of merge over the chunk stats, early returns for empty sides.
import functools

import torch


def chunk_stats(x):
    n = x.shape[0]
    x = x.to(torch.float64)
    if n == 0:
        zeros = torch.zeros(x.shape[1], dtype=torch.float64, device=x.device)
        return 0, zeros, zeros.clone()
    mean = x.sum(dim=0) / n
    dev = x - mean
    return n, mean, (dev * dev).sum(dim=0)


def merge(a, b):
    n_a, mean_a, m2_a = a
    n_b, mean_b, m2_b = b
    if n_a == 0:
        return n_b, mean_b.clone(), m2_b.clone()
    if n_b == 0:
        return n_a, mean_a.clone(), m2_a.clone()
    n = n_a + n_b
    delta = mean_b - mean_a
    mean = mean_a + delta * (n_b / n)
    m2 = m2_a + m2_b + delta * delta * (n_a * n_b / n)
    return n, mean, m2


def stream_stats(chunks, unbiased=False):
    n, mean, m2 = functools.reduce(merge, map(chunk_stats, chunks))
    if n == 0:
        nan = torch.full_like(mean, float("nan"))
        return nan, nan.clone()
    denom = n - 1 if unbiased else n
    var = m2 / denom if denom > 0 else torch.full_like(m2, float("nan"))
    return mean, var.sqrt()
