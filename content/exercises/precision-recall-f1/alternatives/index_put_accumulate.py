# Style: index_put_ with accumulate=True on a (C, C) zero matrix; explicit TP, FP, FN vectors
# and a masked division.
import torch


def _ratio(num, den):
    out = torch.zeros_like(num)
    nonzero = den != 0
    out[nonzero] = num[nonzero] / den[nonzero]
    return out


def precision_recall_f1(preds, targets, num_classes):
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.int64, device=preds.device)
    ones = torch.ones_like(preds)
    confusion.index_put_((targets, preds), ones, accumulate=True)

    m = confusion.double()
    tp = torch.diag(m)
    fp = m.sum(dim=0) - tp
    fn = m.sum(dim=1) - tp
    precision = _ratio(tp, tp + fp)
    recall = _ratio(tp, tp + fn)
    f1 = _ratio(2 * tp, 2 * tp + fp + fn)
    n = m.sum()
    return dict(
        confusion=confusion,
        precision=precision,
        recall=recall,
        f1=f1,
        macro_f1=f1.mean(),
        micro_f1=_ratio((2 * tp.sum()).reshape(1), (2 * n).reshape(1)).reshape(()),
    )
