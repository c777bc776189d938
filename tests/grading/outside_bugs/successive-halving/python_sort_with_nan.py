# Bug: The ranking is sorted(alive, key=lambda c: (loss, c)) on Python floats, and NaN compares False with everything, so a diverged run lands anywhere in the ranking instead of last; a correct version puts NaN after every number explicitly.
import math

import torch


def successive_halving(losses, eta=3):
    if eta < 2:
        raise ValueError("eta must be at least 2")
    n_configs, n_rungs = losses.shape
    survivors = torch.arange(n_configs)
    rungs = []
    for r in range(n_rungs):
        # A stable ascending sort ranks ties by config index; NaN sorts after everything,
        # so a run that blew up never beats one that finished.
        alive = survivors.tolist()
        ranked = torch.tensor(sorted(alive, key=lambda c: (float(losses[c, r]), c)))
        rungs.append(ranked.tolist())
        if len(ranked) == 1:
            break
        # Keep the best 1/eta (at least one) for the next, larger budget, back in index order
        # so that the next rung's ties are broken by config index, not by this rung's rank.
        survivors = ranked[: max(1, len(ranked) // eta)].sort().values
    return rungs, rungs[-1][0]


def log_uniform(u, low, high):
    if low <= 0 or low >= high:
        raise ValueError("need 0 < low < high")
    # Uniform in log space: every decade between low and high is equally likely.
    log_low, log_high = math.log(low), math.log(high)
    return torch.exp(log_low + u * (log_high - log_low))
