# Style: a mask of alive configs, ranking by two stable sorts (index order, then NaN-free key); float64 inside; __all__ and a self-test.
import math

import torch

__all__ = ["successive_halving", "log_uniform"]


def _ranking(values: torch.Tensor, alive: torch.Tensor) -> list[int]:
    idx = torch.nonzero(alive).flatten()  # ascending config index
    v = values[idx].double()
    nan = torch.isnan(v)
    key = torch.where(nan, torch.zeros_like(v), v)
    # Stable sorts: by value first, then by the NaN flag; earlier order survives ties.
    by_value = torch.sort(key, stable=True).indices
    by_nan = torch.sort(nan[by_value].to(torch.int8), stable=True).indices
    return idx[by_value[by_nan]].tolist()


def successive_halving(losses: torch.Tensor, eta: int = 3):
    if eta < 2:
        raise ValueError("eta < 2")
    n, n_rungs = losses.shape
    alive = torch.ones(n, dtype=torch.bool)
    rungs: list[list[int]] = []
    for r in range(n_rungs):
        ranked = _ranking(losses[:, r], alive)
        rungs.append(ranked)
        if len(ranked) <= 1:
            break
        alive = torch.zeros(n, dtype=torch.bool)
        alive[ranked[: max(1, len(ranked) // eta)]] = True
    return rungs, int(rungs[-1][0])


def log_uniform(u: torch.Tensor, low: float, high: float) -> torch.Tensor:
    if low <= 0.0 or high <= low:
        raise ValueError(f"bad range [{low}, {high})")
    lo, hi = math.log(low), math.log(high)
    return torch.exp(torch.lerp(torch.full_like(u.double(), lo), torch.full_like(u.double(), hi),
                                u.double())).to(u.dtype)  # fmt: skip


if __name__ == "__main__":
    print(successive_halving(torch.tensor([[1.0, 0.5], [0.8, 0.7], [0.9, 0.1]]), eta=2))
