# Style: operator.lt/gt chosen in the constructor with a signed margin; copy.deepcopy of detached tensors.
import copy
import math
import operator

import torch


class EarlyStopping:
    """The comparison is chosen once, in the constructor; the margin's sign goes with it."""

    def __init__(self, patience, min_delta=0.0, mode="min"):
        if not isinstance(patience, int) or patience < 1:
            raise ValueError(f"patience must be an int >= 1, got {patience!r}")
        if min_delta < 0:
            raise ValueError(f"min_delta must be >= 0, got {min_delta!r}")
        if mode == "min":
            self._better, self._margin, start = operator.lt, -min_delta, math.inf
        elif mode == "max":
            self._better, self._margin, start = operator.gt, min_delta, -math.inf
        else:
            raise ValueError(f"unknown mode {mode!r}")
        self.patience = patience
        self.best, self.best_epoch, self.bad_epochs = start, -1, 0
        self.best_state = None
        self._calls = 0

    def step(self, metric, state=None):
        value = float(metric.detach()) if torch.is_tensor(metric) else float(metric)
        here, self._calls = self._calls, self._calls + 1
        if self._better(value, self.best + self._margin):
            self.best, self.best_epoch, self.bad_epochs = value, here, 0
            if state is None:
                self.best_state = None
            else:
                self.best_state = copy.deepcopy({k: t.detach() for k, t in state.items()})
        else:
            self.bad_epochs += 1
        return bool(self.bad_epochs >= self.patience)
