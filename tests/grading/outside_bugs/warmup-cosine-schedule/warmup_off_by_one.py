# Bug: The warm-up uses (step + 1) / warmup_steps, so it starts at base_lr / warmup_steps instead of 0 and reaches base_lr one step early; a correct warm-up is base_lr * step / warmup_steps.
import math


def lr_at(step, base_lr, warmup_steps, total_steps, min_lr=0.0):
    if step >= total_steps:
        # Past the end the rate stays at its floor: cos would climb back up otherwise.
        return float(min_lr)
    if step < warmup_steps:
        # step 0 gives 0 and step == warmup_steps (the decay's start) gives base_lr exactly.
        return base_lr * (step + 1) / warmup_steps
    # The decay spans total - warmup steps, not total: progress reaches 1 at total_steps.
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_lr + (base_lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))
