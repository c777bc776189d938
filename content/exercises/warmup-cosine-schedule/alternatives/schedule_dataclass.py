# Style: a small frozen dataclass that holds the schedule and is called with the step; __all__.
import math
from dataclasses import dataclass

__all__ = ["WarmupCosine", "lr_at"]


@dataclass(frozen=True)
class WarmupCosine:
    base_lr: float
    warmup_steps: int
    total_steps: int
    min_lr: float = 0.0

    def _warmup(self, step: int) -> float:
        return self.base_lr * step / self.warmup_steps

    def _cosine(self, step: int) -> float:
        span = self.total_steps - self.warmup_steps
        progress = (step - self.warmup_steps) / span
        return self.min_lr + 0.5 * (self.base_lr - self.min_lr) * (1.0 + math.cos(math.pi * progress))

    def __call__(self, step: int) -> float:
        if step >= self.total_steps:
            return float(self.min_lr)
        if step < self.warmup_steps:
            return float(self._warmup(step))
        return float(self._cosine(step))


def lr_at(
    step: int, base_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0
) -> float:
    return WarmupCosine(base_lr, warmup_steps, total_steps, min_lr)(step)
