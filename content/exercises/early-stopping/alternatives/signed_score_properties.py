# Style: a higher-is-better score (negated for losses), best as a property, explicit isnan, empty_like + copy_; __all__ and a self-test.
import math

import torch

__all__ = ["EarlyStopping"]


class EarlyStopping:
    """Works on a score where higher is always better (the metric, negated for a loss)."""

    def __init__(self, patience: int, min_delta: float = 0.0, mode: str = "min") -> None:
        if mode not in {"min", "max"}:
            raise ValueError("mode must be 'min' or 'max'")
        if patience < 1 or min_delta < 0:
            raise ValueError("need patience >= 1 and min_delta >= 0")
        self.patience = patience
        self.min_delta = min_delta
        self._sign = -1.0 if mode == "min" else 1.0
        self._best_score = -math.inf
        self.best_epoch = -1
        self.bad_epochs = 0
        self.best_state = None
        self._history: list[float] = []

    @property
    def best(self) -> float:
        return self._sign * self._best_score

    def step(self, metric, state=None) -> bool:
        if isinstance(metric, torch.Tensor):
            metric = metric.detach().double().item()
        self._history.append(float(metric))
        score = self._sign * float(metric)
        if not math.isnan(score) and score - self._best_score > self.min_delta:
            self._best_score = score
            self.best_epoch = len(self._history) - 1
            self.bad_epochs = 0
            self.best_state = (
                {name: torch.empty_like(t).copy_(t.detach()) for name, t in state.items()}
                if state is not None
                else None
            )
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


if __name__ == "__main__":
    es = EarlyStopping(patience=2, min_delta=0.05)
    for loss in [1.0, 0.8, 0.78, 0.9]:
        print(es.step(loss, {"w": torch.tensor([loss])}), es.best, es.best_epoch)
