import math


def lr_at(
    step: int, base_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0
) -> float:
    """The learning rate after `step` optimiser steps (step >= 0): linear warm-up from 0 to
    base_lr over warmup_steps, cosine decay to min_lr at total_steps, min_lr afterwards."""
    raise NotImplementedError
