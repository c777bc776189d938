# Style: keeps the whole metric history and recomputes best and the counters from it on every step.
import math

import torch


class EarlyStopping:
    """Keeps every metric and recomputes the counters from the history on each step: slower,
    but each attribute is a direct reading of the statement's rules."""

    def __init__(self, patience, min_delta=0.0, mode="min"):
        if patience < 1:
            raise ValueError("patience < 1")
        if min_delta < 0:
            raise ValueError("min_delta < 0")
        if mode != "min" and mode != "max":
            raise ValueError("bad mode")
        self.patience, self.min_delta, self.mode = patience, min_delta, mode
        self.history = []
        self.best_state = None
        self._refresh()

    def _refresh(self):
        best = math.inf if self.mode == "min" else -math.inf
        best_epoch = -1
        for i, m in enumerate(self.history):
            if math.isnan(m):
                continue
            gain = best - m if self.mode == "min" else m - best
            if gain > self.min_delta:
                best, best_epoch = m, i
        self.best, self.best_epoch = best, best_epoch
        self.bad_epochs = (
            len(self.history) - 1 - best_epoch if best_epoch >= 0 else len(self.history)
        )

    def step(self, metric, state=None):
        self.history.append(float(torch.as_tensor(metric).detach().item()))
        self._refresh()
        if self.best_epoch == len(self.history) - 1:
            self.best_state = (
                None if state is None else {k: v.detach().clone() for k, v in state.items()}
            )
        return self.bad_epochs >= self.patience
