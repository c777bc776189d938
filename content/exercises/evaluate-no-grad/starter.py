import torch


def evaluate(model: torch.nn.Module, batches: list) -> tuple[float, float]:
    """Evaluate a classifier on a list of (x, y) batches.

    model:   a torch.nn.Module mapping x (B, D) to logits (B, C); it may contain Dropout and
             BatchNorm, and may be in train or eval mode (or a mix) when it arrives.
    batches: a list of (x, y) pairs, x (B, D) floating, y (B,) int64 class indices in
             [0, C); B may differ between batches and may be 0.

    Returns (mean cross-entropy over all examples, accuracy), both Python floats;
    (nan, nan) when there are no examples at all.
    """
    raise NotImplementedError
