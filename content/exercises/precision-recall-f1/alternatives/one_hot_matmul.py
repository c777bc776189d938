# Style: the confusion matrix as a product of one-hot matrices (onehot(t)^T @ onehot(p)),
# counted in float64 and cast to int64; 0/0 turned into 0 with nan_to_num.
import torch
import torch.nn.functional as F


def precision_recall_f1(preds, targets, num_classes):
    t = F.one_hot(targets, num_classes).to(torch.float64)  # (N, C)
    p = F.one_hot(preds, num_classes).to(torch.float64)  # (N, C)
    counts = t.T @ p  # counts[i, j] = #(target i, pred j), exact in float64
    tp = torch.diag(counts)
    precision = torch.nan_to_num(tp / counts.sum(0), nan=0.0)
    recall = torch.nan_to_num(tp / counts.sum(1), nan=0.0)
    f1 = torch.nan_to_num(2 * precision * recall / (precision + recall), nan=0.0)
    return {
        "confusion": counts.round().to(torch.int64),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "macro_f1": f1.sum() / num_classes,
        "micro_f1": (preds == targets).to(torch.float64).mean(),
    }
