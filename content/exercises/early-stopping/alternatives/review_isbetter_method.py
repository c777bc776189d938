# Style: a private _is_better method with an explicit NaN check, a static _snapshot that clones tensors (deep-copies anything else), an int call counter.
import copy
import math

import torch


class EarlyStopping:
    def __init__(self, patience, min_delta=0.0, mode="min"):
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if patience < 1:
            raise ValueError("patience must be >= 1")
        if min_delta < 0:
            raise ValueError("min_delta must be >= 0")
        self.patience = patience
        self.min_delta = min_delta
        self.mode = mode
        self.best = math.inf if mode == "min" else -math.inf
        self.best_epoch = -1
        self.bad_epochs = 0
        self.best_state = None
        self._epoch = 0

    def _is_better(self, value):
        if math.isnan(value):
            return False
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    @staticmethod
    def _snapshot(state):
        if state is None:
            return None
        out = {}
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                out[key] = value.detach().clone()
            else:
                out[key] = copy.deepcopy(value)
        return out

    def step(self, metric, state=None):
        value = metric.item() if isinstance(metric, torch.Tensor) else float(metric)
        epoch = self._epoch
        self._epoch += 1
        if self._is_better(value):
            self.best = value
            self.best_epoch = epoch
            self.bad_epochs = 0
            self.best_state = self._snapshot(state)
        else:
            self.bad_epochs += 1
        return bool(self.bad_epochs >= self.patience)
