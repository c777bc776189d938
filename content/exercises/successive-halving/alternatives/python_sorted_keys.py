# Style: pure Python on lists (tolist), sorted with a (is_nan, value, index) key; log_uniform as low * (high / low) ** u.
import math

import torch


def _rank(alive, column):
    return sorted(alive, key=lambda c: (math.isnan(column[c]), 0.0 if math.isnan(column[c])
                                        else column[c], c))  # fmt: skip


def successive_halving(losses, eta=3):
    if not eta >= 2:
        raise ValueError(f"eta={eta}: need eta >= 2")
    table = losses.tolist()
    n_rungs = len(table[0])
    alive = list(range(len(table)))
    rungs = []
    for r in range(n_rungs):
        ranked = _rank(alive, [row[r] for row in table])
        rungs.append(ranked)
        if len(ranked) == 1 or r == n_rungs - 1:
            break
        alive = sorted(ranked[: max(1, len(ranked) // eta)])
    return rungs, rungs[-1][0]


def log_uniform(u, low, high):
    if not (0 < low < high):
        raise ValueError("need 0 < low < high")
    return low * torch.pow(torch.tensor(high / low, dtype=u.dtype), u)
