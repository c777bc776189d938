# Style: recursion over the rungs with a dict of config -> losses; log_uniform via log10 and powers of ten.
import math

import torch


def _order_key(item):
    config, loss = item
    return (loss != loss, loss if loss == loss else 0.0, config)


def _halve(rows, r, n_rungs, eta):
    ranked = [c for c, _ in sorted(((c, rows[c][r]) for c in sorted(rows)), key=_order_key)]
    if len(ranked) == 1 or r + 1 == n_rungs:
        return [ranked]
    keep = max(1, len(ranked) // eta)
    return [ranked] + _halve({c: rows[c] for c in ranked[:keep]}, r + 1, n_rungs, eta)


def successive_halving(losses, eta=3):
    if eta < 2:
        raise ValueError("eta must be >= 2")
    rows = {c: row for c, row in enumerate(losses.tolist())}
    rungs = _halve(rows, 0, losses.shape[1], eta)
    return rungs, rungs[-1][0]


def log_uniform(u, low, high):
    if low <= 0 or low >= high:
        raise ValueError("need 0 < low < high")
    a, b = math.log10(low), math.log10(high)
    return torch.pow(10.0, a + u.double() * (b - a)).to(u.dtype)
