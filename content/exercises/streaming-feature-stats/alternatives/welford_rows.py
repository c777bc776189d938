# Style: Welford's one-row-at-a-time update inside each chunk; merge with n-weighted means.
import torch


def chunk_stats(x):
    features = x.shape[1]
    n = 0
    mean = torch.zeros(features, dtype=torch.float64, device=x.device)
    m2 = torch.zeros(features, dtype=torch.float64, device=x.device)
    for row in x.to(torch.float64):
        n += 1
        delta = row - mean
        mean = mean + delta / n
        m2 = m2 + delta * (row - mean)
    return n, mean, m2


def merge(a, b):
    n_a, mean_a, m2_a = a
    n_b, mean_b, m2_b = b
    n = n_a + n_b
    if n_b == 0:
        return n_a, mean_a.clone(), m2_a.clone()
    if n_a == 0:
        return n_b, mean_b.clone(), m2_b.clone()
    w_a, w_b = n_a / n, n_b / n
    delta = mean_b - mean_a
    return n, w_a * mean_a + w_b * mean_b, m2_a + m2_b + n_a * w_b * delta * delta


def stream_stats(chunks, unbiased=False):
    state = chunk_stats(chunks[0][:0])
    for chunk in chunks:
        state = merge(state, chunk_stats(chunk))
    n, mean, m2 = state
    if n == 0:
        nan = torch.full_like(mean, float("nan"))
        return nan, nan.clone()
    return mean, torch.sqrt(m2 / (n - int(unbiased)))
