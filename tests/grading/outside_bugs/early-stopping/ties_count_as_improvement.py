# Bug: The improvement test uses <= (and >= in mode max), so a tie with best - min_delta (or with best when min_delta = 0) counts as an improvement and resets the patience; a correct version requires strictly better.
import math

import torch


class EarlyStopping:
    def __init__(self, patience, min_delta=0.0, mode="min"):
        # Refuse settings that make no sense rather than silently never (or always) stopping.
        if patience < 1:
            raise ValueError("patience must be at least 1")
        if min_delta < 0:
            raise ValueError("min_delta must be non-negative")
        if mode not in ("min", "max"):
            raise ValueError("mode must be 'min' or 'max'")
        self.patience, self.min_delta, self.mode = patience, min_delta, mode
        # The worst possible value: the first finite metric is always an improvement.
        self.best = math.inf if mode == "min" else -math.inf
        self.best_epoch = -1
        self.bad_epochs = 0
        self.best_state = None
        self.epochs = 0

    def _improves(self, metric):
        # Strictly better by more than min_delta; NaN compares False, so it never improves.
        if self.mode == "min":
            return metric <= self.best - self.min_delta
        return metric >= self.best + self.min_delta

    def step(self, metric, state=None):
        # A number or a 0-dim tensor: keep a Python float, never the tensor nor its graph.
        metric = torch.as_tensor(metric).item()
        epoch = self.epochs
        self.epochs += 1
        if self._improves(metric):
            self.best, self.best_epoch, self.bad_epochs = metric, epoch, 0
            # A copy, detached from any graph: the caller keeps training these tensors in place.
            self.best_state = (
                None if state is None else {k: v.detach().clone() for k, v in state.items()}
            )
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience
