import torch


def precision_recall_f1(preds: torch.Tensor, targets: torch.Tensor, num_classes: int) -> dict:
    """preds, targets: (N,) int64 class indices in [0, num_classes), N >= 1.

    Returns a dict:
      "confusion": (C, C) int64, rows = true class, columns = predicted class
      "precision", "recall", "f1": (C,) float64, 0 where a denominator is 0
      "macro_f1", "micro_f1": 0-d float64 tensors
    """
    raise NotImplementedError
