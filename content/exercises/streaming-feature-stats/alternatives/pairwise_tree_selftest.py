# Style: an accumulator class, summaries merged as a balanced pairwise tree; __main__ self-test.
import math

import torch


class Summary:
    def __init__(self, count, mean, m2):
        self.count, self.mean, self.m2 = count, mean, m2

    @classmethod
    def of(cls, x):
        x = x.to(torch.float64)
        if x.shape[0] == 0:
            zero = torch.zeros(x.shape[1], dtype=torch.float64, device=x.device)
            return cls(0, zero, zero.clone())
        mean = x.mean(0)
        return cls(x.shape[0], mean, ((x - mean) ** 2).sum(0))

    def __add__(self, other):
        n = self.count + other.count
        if n == 0:
            return Summary(0, self.mean.clone(), self.m2.clone())
        shift = other.mean - self.mean
        frac = other.count / n
        return Summary(
            n, self.mean + frac * shift, self.m2 + other.m2 + shift**2 * self.count * frac
        )

    def as_tuple(self):
        return self.count, self.mean, self.m2


def chunk_stats(x):
    return Summary.of(x).as_tuple()


def merge(a, b):
    return (Summary(*a) + Summary(*b)).as_tuple()


def stream_stats(chunks, unbiased=False):
    level = [Summary.of(x) for x in chunks]
    while len(level) > 1:  # pairs of neighbours: rounding errors grow like log(k), not k
        level = [
            level[i] + level[i + 1] if i + 1 < len(level) else level[i]
            for i in range(0, len(level), 2)
        ]
    total = level[0]
    if total.count == 0:
        return (torch.full_like(total.mean, math.nan), torch.full_like(total.mean, math.nan))
    denominator = total.count - 1 if unbiased else total.count
    return total.mean, (total.m2 / denominator).sqrt()


if __name__ == "__main__":
    data = [torch.randn(5, 3) + 1e4, torch.zeros(0, 3), torch.randn(2, 3) + 1e4]
    print(stream_stats(data))
