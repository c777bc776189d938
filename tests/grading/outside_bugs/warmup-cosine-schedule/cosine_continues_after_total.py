# Bug: Steps past total_steps are not clamped, so the cosine keeps going and the rate climbs back up from min_lr; a correct schedule stays at min_lr for every step >= total_steps.
import math


def lr_at(step, base_lr, warmup_steps, total_steps, min_lr=0.0):
    if step == total_steps:
        return float(min_lr)
    if step < warmup_steps:
        # step 0 gives 0 and step == warmup_steps (the decay's start) gives base_lr exactly.
        return base_lr * step / warmup_steps
    # The decay spans total - warmup steps, not total: progress reaches 1 at total_steps.
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_lr + (base_lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))
