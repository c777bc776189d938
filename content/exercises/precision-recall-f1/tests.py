import torch

from sandbox.grading import (
    case,
    edge,
    expect_close,
    fail,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)

KEYS = ("confusion", "precision", "recall", "f1", "macro_f1", "micro_f1")


def labelled(d, n=None, classes=None, right=0.6, pred_high=None):
    """Targets and predictions, about `right` of the predictions copied from the targets."""
    n = n if n is not None else d.size(1, 60)
    classes = classes if classes is not None else d.size(1, 12)
    targets = d.integers((n,), 0, classes)
    guesses = d.integers((n,), 0, pred_high if pred_high is not None else classes)
    keep = d.tensor((n,), low=0, high=1, dtype=torch.float64) < right
    preds = torch.where(keep, targets, guesses)
    return case(preds, targets, classes)


def trusted(c):
    """The definitions, counted one sample at a time in plain Python."""
    preds, targets, classes = c.args
    confusion = [[0] * classes for _ in range(classes)]
    for p, t in zip(preds.tolist(), targets.tolist(), strict=True):
        confusion[t][p] += 1

    def ratio(a, b):
        return a / b if b else 0.0

    precision, recall, f1 = [], [], []
    for k in range(classes):
        tp = confusion[k][k]
        predicted = sum(confusion[t][k] for t in range(classes))
        actual = sum(confusion[k])
        p, r = ratio(tp, predicted), ratio(tp, actual)
        precision.append(p)
        recall.append(r)
        f1.append(ratio(2 * p * r, p + r))
    correct = sum(confusion[k][k] for k in range(classes))
    f64 = torch.float64
    return {
        "confusion": torch.tensor(confusion, dtype=torch.int64),
        "precision": torch.tensor(precision, dtype=f64),
        "recall": torch.tensor(recall, dtype=f64),
        "f1": torch.tensor(f1, dtype=f64),
        "macro_f1": torch.tensor(sum(f1) / classes, dtype=f64),
        "micro_f1": torch.tensor(correct / len(preds), dtype=f64),
    }


def report(sol, c):
    out = sol.call("precision_recall_f1", *c.args)
    if not isinstance(out, dict) or set(out) != set(KEYS):
        fail(f"expected a dict with the keys {', '.join(KEYS)}")
    return out


def unseen_classes(d):
    """Predictions and targets use only the lower classes: some classes never appear."""
    classes = d.size(4, 12)
    return labelled(d, classes=classes, right=0.4, pred_high=classes - 2)


def never_predicted(d):
    """Predictions use only class 0 and 1: the others have precision 0 / 0."""
    return labelled(d, classes=d.size(3, 9), right=0.0, pred_high=2)


def all_right(d):
    return labelled(d, right=1.0)


def wrong_everywhere(d):
    """Each prediction is another class than its target."""
    n, classes = d.size(1, 30), d.size(2, 8)
    targets = d.integers((n,), 0, classes)
    preds = (targets + d.integers((n,), 1, classes)) % classes
    return case(preds, targets, classes)


def counts_add_up(sol, c):
    preds, targets, classes = c.args
    out = report(sol, c)
    confusion = out["confusion"]
    if not isinstance(confusion, torch.Tensor) or tuple(confusion.shape) != (classes, classes):
        fail(f"the confusion matrix should be ({classes}, {classes})")
    expect_close(confusion.sum(dim=1), torch.bincount(targets, minlength=classes),
                 "row sums of the confusion matrix (the true classes)")
    expect_close(confusion.sum(dim=0), torch.bincount(preds, minlength=classes),
                 "column sums of the confusion matrix (the predicted classes)")


def micro_is_accuracy(sol, c):
    preds, targets, _ = c.args
    out = report(sol, c)
    accuracy = (preds == targets).double().mean()
    expect_close(out["micro_f1"], accuracy, "micro_f1 against the accuracy")


def f1_is_harmonic_mean(sol, c):
    out = report(sol, c)
    p, r = out["precision"], out["recall"]
    den = p + r
    harmonic = torch.where(den > 0, 2 * p * r / torch.where(den > 0, den, 1), 0)
    expect_close(out["f1"], harmonic, "f1 against 2PR / (P + R)")
    expect_close(out["macro_f1"], out["f1"].mean(), "macro_f1 against the mean of f1")


def swapping_transposes(sol, c):
    """Swapping predictions and targets transposes the matrix and swaps precision and recall."""
    preds, targets, classes = c.args
    out = report(sol, c)
    swapped = report(sol, case(targets, preds, classes))
    expect_close(swapped["confusion"], out["confusion"].T, "confusion with the roles swapped")
    expect_close(swapped["precision"], out["recall"], "precision with the roles swapped")


def timing_case(d):
    return labelled(d, n=20000, classes=10)


DECLARATIONS = [
    values("a small labelled set", "precision_recall_f1", labelled, visible=True, expect=trusted,
           description="every entry against the definitions counted sample by sample"),
    values("drawn sets", "precision_recall_f1", labelled, cases=5, expect=trusted),
    values("larger sets, many classes", "precision_recall_f1",
           lambda d: labelled(d, n=d.size(100, 400), classes=d.size(10, 40), right=0.3),
           cases=3, expect=trusted),
    shapes("dtypes and shapes of every entry", "precision_recall_f1", labelled,
           description="confusion int64 (C, C); the rest float64, (C,) or 0-d"),
    edge("classes that never appear", "precision_recall_f1", unseen_classes, visible=True,
         expect=trusted, cases=3, description="0 / 0 counts as 0; macro averages over all C"),
    edge("classes that are never predicted", "precision_recall_f1", never_predicted,
         expect=trusted, cases=3),
    edge("every prediction right", "precision_recall_f1", all_right, expect=trusted, cases=2),
    edge("every prediction wrong", "precision_recall_f1", wrong_everywhere, expect=trusted,
         cases=2, description="every precision, recall and F1 is 0"),
    edge("a single class", "precision_recall_f1", lambda d: labelled(d, classes=1),
         expect=trusted, cases=2),
    edge("a single sample", "precision_recall_f1", lambda d: labelled(d, n=1), expect=trusted,
         cases=3),
    prop("the confusion matrix's rows and columns add up", counts_add_up, labelled, cases=3),
    prop("micro F1 is the accuracy", micro_is_accuracy, labelled, cases=3),
    prop("F1 is the harmonic mean of precision and recall", f1_is_harmonic_mean, unseen_classes,
         cases=3),
    prop("swapping predictions and targets transposes", swapping_transposes, labelled, cases=3),
    nontrivial("the report is not zero", "precision_recall_f1", labelled),
    performance("time against the reference", "precision_recall_f1", timing_case,
                description="20,000 predictions over 10 classes; reported with its spread, "
                "not graded in this exercise"),
]
