# Bug: The confusion matrix is filled with index_put_ without accumulate=True, so a (true, predicted) pair that occurs several times is counted once, and every count above 1 comes out as 1.
import torch


def _safe_div(num: torch.Tensor, den: torch.Tensor) -> torch.Tensor:
    # The convention of the statement: a ratio whose denominator is 0 counts as 0. Every
    # numerator here is a count no larger than its (whole-number) denominator, so where the
    # denominator is 0 the numerator is 0 too, and dividing by max(den, 1) gives 0 / 1 = 0.
    return num / den.clamp_min(1)


def precision_recall_f1(preds: torch.Tensor, targets: torch.Tensor, num_classes: int) -> dict:
    c = num_classes
    # One index_put_ at (target, pred) fills the whole matrix at once:
    # row = true class, column = predicted class.
    confusion = torch.zeros((c, c), dtype=torch.int64, device=preds.device)
    confusion.index_put_((targets, preds), torch.ones_like(preds))

    counts = confusion.to(torch.float64)
    true_pos = counts.diagonal()
    predicted = counts.sum(dim=0)  # column sums: how often each class was predicted
    actual = counts.sum(dim=1)  # row sums: how often each class is the truth (support)

    precision = _safe_div(true_pos, predicted)
    recall = _safe_div(true_pos, actual)
    # F1 = 2PR / (P + R) = 2TP / (2TP + FP + FN): the second form needs no P and R.
    f1 = _safe_div(2 * true_pos, predicted + actual)

    # Macro: every class weighs the same, absent ones included (their F1 is 0).
    macro_f1 = f1.mean()
    # Micro: pool TP, FP, FN over the classes; with one label per sample FP = FN = the
    # number of mistakes, so micro precision = micro recall = micro F1 = accuracy.
    micro_f1 = true_pos.sum() / counts.sum()
    return {
        "confusion": confusion,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "macro_f1": macro_f1,
        "micro_f1": micro_f1,
    }
