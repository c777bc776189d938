# Style: a table of phase boundaries searched with bisect, one small function per phase.
import bisect
import math


def lr_at(
    step: int, base_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0
) -> float:
    def warmup(s: int) -> float:
        return base_lr * s / warmup_steps

    def decay(s: int) -> float:
        t = (s - warmup_steps) / (total_steps - warmup_steps)
        weight = (1.0 + math.cos(math.pi * t)) / 2.0
        # a convex mix: exactly base_lr when weight == 1
        return weight * base_lr + (1.0 - weight) * min_lr

    def floor(_s: int) -> float:
        return min_lr

    # phase k covers [bounds[k-1], bounds[k]); an empty phase (warmup_steps == 0, or
    # total_steps == warmup_steps) is skipped because bisect_right passes over equal bounds
    bounds = [warmup_steps, total_steps]
    phases = [warmup, decay, floor]
    return float(phases[bisect.bisect_right(bounds, step)](step))
