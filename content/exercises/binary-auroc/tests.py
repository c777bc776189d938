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


def scored(d, n=None, levels=None, separation=1.0):
    """Scores of both classes, positives shifted up by `separation`; with `levels`, scores
    are rounded to that many distinct values (heavy ties)."""
    n = n if n is not None else d.size(2, 80)
    labels = d.integers((n,), 0, 2)
    labels[0], labels[-1] = 1, 0  # both classes present
    labels = labels[d.permutation(n)]
    scores = d.tensor((n,), normal=True) + separation * labels.to(d.dtype)
    if levels is not None:
        scores = torch.floor((scores + 3) * levels / 7).clamp(0, levels - 1)
    return case(scores, labels)


def trusted(c):
    """Every (positive, negative) pair compared in float64: 1 above, 1/2 tied, 0 below."""
    scores, labels = c.args
    s = scores.to(torch.float64)
    pos, neg = s[labels == 1], s[labels == 0]
    above = (pos[:, None] > neg[None, :]).to(torch.float64)
    tied = (pos[:, None] == neg[None, :]).to(torch.float64)
    return (above + 0.5 * tied).sum() / (pos.numel() * neg.numel())


def heavy_ties(d):
    return scored(d, levels=d.choice([2, 3, 5]))


def two_points(d):
    labels = torch.tensor([1, 0]) if d.case % 2 == 0 else torch.tensor([0, 1])
    scores = d.tensor((2,))
    if d.case >= 2:
        scores[1] = scores[0]
    return case(scores, labels)


def one_class(d):
    n = d.size(1, 20)
    label = d.case % 2
    return case(d.tensor((n,)), torch.full((n,), label, dtype=torch.int64))


def all_tied(d):
    n = d.size(2, 30)
    c = scored(d, n=n)
    return case(torch.full((n,), float(d.number(-2, 2)), dtype=d.dtype), c.args[1])


def separated(d):
    """Every positive above every negative, or (odd cases) every one below."""
    n = d.size(2, 40)
    labels = d.integers((n,), 0, 2)
    labels[0], labels[-1] = 1, 0
    sign = 1.0 if d.case % 2 == 0 else -1.0
    scores = d.tensor((n,), low=0, high=1) + sign * 5.0 * labels.to(d.dtype)
    return case(scores, labels)


def auc_of(sol, scores, labels):
    out = sol.call("auroc", scores, labels)
    if not isinstance(out, torch.Tensor) or out.dim() != 0:
        fail("expected a 0-d tensor")
    return out


def monotone_invariant(sol, c):
    """Only the order matters: a strictly increasing map of the scores changes nothing."""
    scores, labels = c.args
    moved = torch.exp(scores.to(torch.float64) / 2) * 3 - 1
    expect_close(auc_of(sol, moved, labels), auc_of(sol, scores, labels),
                 "AUC after exp(s / 2) * 3 - 1")


def flipping_labels(sol, c):
    """Swapping the classes gives 1 - AUC."""
    scores, labels = c.args
    expect_close(auc_of(sol, scores, 1 - labels), 1 - auc_of(sol, scores, labels),
                 "AUC with the labels swapped")


def order_free(sol, c):
    """Shuffling the samples changes nothing."""
    scores, labels = c.args
    perm = torch.randperm(scores.numel(), generator=torch.Generator().manual_seed(7))
    expect_close(auc_of(sol, scores[perm], labels[perm]), auc_of(sol, scores, labels),
                 "AUC of the shuffled samples")


def timing_case(d):
    """4,000 scores, a tenth of them in ties, both classes mixed."""
    c = scored(d, n=4000, separation=0.8)
    scores, labels = c.args
    scores[: 400] = torch.round(scores[: 400] * 4) / 4
    return case(scores, labels)


DECLARATIONS = [
    values("distinct scores", "auroc", scored, visible=True, expect=trusted,
           description="against every positive-negative pair compared in float64"),
    values("float32 and float64 scores", "auroc", scored, cases=4,
           dtypes=("float32", "float64"), expect=trusted),
    values("larger sets", "auroc", lambda d: scored(d, n=d.size(300, 900), separation=0.5),
           cases=2, expect=trusted),
    shapes("a 0-d float64 tensor", "auroc", scored, dtypes=("float32", "float64")),
    edge("heavy ties", "auroc", heavy_ties, visible=True, expect=trusted, cases=4,
         description="two to five distinct scores: a tied pair counts one half"),
    edge("many ties in larger sets", "auroc",
         lambda d: scored(d, n=d.size(100, 500), levels=d.choice([4, 9])), expect=trusted,
         cases=3),
    edge("two samples", "auroc", two_points, expect=trusted, cases=4),
    edge("every score equal", "auroc", all_tied, expect=trusted, cases=2),
    edge("perfectly separated or reversed", "auroc", separated, expect=trusted, cases=4),
    edge("one class missing gives NaN", "auroc", one_class, cases=2,
         expect=lambda c: torch.tensor(float("nan"), dtype=torch.float64)),
    prop("a monotone map of the scores changes nothing", monotone_invariant, heavy_ties,
         cases=3, dtypes=("float64",)),
    prop("swapping the classes gives 1 - AUC", flipping_labels, heavy_ties, cases=3),
    prop("the order of the samples does not matter", order_free, scored, cases=2),
    nontrivial("the AUC is not zero", "auroc", scored),
    performance("time against the reference", "auroc", timing_case,
                description="4,000 scores; graded: at most 3x the reference's time"),
]
