# Style: the equal formula (1 + cos(pi p)) / 2 = 1 - sin^2(pi p / 2), decaying down from base_lr; self-test.
import math


def lr_at(
    step: int, base_lr: float, warmup_steps: int, total_steps: int, min_lr: float = 0.0
) -> float:
    if step >= total_steps:
        return float(min_lr)
    if step < warmup_steps:
        return base_lr * (step / warmup_steps)
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    # 1 - (1 + cos(pi p)) / 2 = sin^2(pi p / 2): the share of (base_lr - min_lr) already lost
    decayed = math.sin(0.5 * math.pi * progress) ** 2
    return float(base_lr - (base_lr - min_lr) * decayed)


if __name__ == "__main__":
    got = [round(lr_at(s, 1.0, warmup_steps=2, total_steps=6, min_lr=0.1), 4) for s in range(8)]
    print(got)
    assert got == [0.0, 0.5, 1.0, 0.8682, 0.55, 0.2318, 0.1, 0.1]
    print([lr_at(s, 3e-4, 0, 4) for s in range(6)])
