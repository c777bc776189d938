import torch
import torch.nn.functional as F

from sandbox.grading import (
    api_rule,
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


def answer(value, what, shape=None, count=None):
    """The learner's answer, checked before a property computes with it: a tensor (of
    `shape`, when given) or a sequence of `count` values; anything else fails the check."""
    if count is not None:
        if not isinstance(value, (tuple, list)) or len(value) != count:
            fail(f"{what}: expected {count} values, got {type(value).__name__}")
        return value
    if not isinstance(value, torch.Tensor):
        fail(f"{what}: expected a tensor, got {type(value).__name__}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"{what}: expected shape {tuple(shape)}, got {tuple(value.shape)}")
    return value


def batch(d, n=None, classes=None, scale=4.0, ignored=0.3, ignore_index=-100, **kwargs):
    """(N, C) logits and targets, about `ignored` of them set to ignore_index."""
    n = n if n is not None else d.size(1, 24)
    classes = classes if classes is not None else d.size(1, 17)
    logits = d.tensor((n, classes), low=-scale, high=scale)
    target = d.integers((n,), 0, classes)
    dropped = d.tensor((n,), low=0, high=1, dtype=torch.float64) < ignored
    target[dropped] = ignore_index
    return case(logits, target, ignore_index=ignore_index, **kwargs)


def smoothed(d):
    return batch(d, label_smoothing=d.choice([0.05, 0.1, 0.25, 0.6]),
                 reduction=d.choice(["mean", "sum", "none"]))


def any_setting(d):
    return batch(d, label_smoothing=d.choice([0.0, 0.1, 0.3]),
                 reduction=d.choice(["mean", "sum", "none"]))


def torch_loss(c):
    """F.cross_entropy in the grader, in float64 then cast back to the case's dtype."""
    logits, target = c.args
    return F.cross_entropy(logits.double(), target, **c.kwargs).to(logits.dtype)


def loss_grad(sol, c):
    """The gradient of the loss with respect to the logits, through the learner's autograd."""
    kwargs = {**c.kwargs, "reduction": "sum"}
    _, grads = sol.vjp("cross_entropy", c.args, torch.ones((), dtype=c.args[0].dtype), kwargs)
    return grads[0]


def torch_loss_grad(c):
    logits = c.args[0].double().requires_grad_(True)
    kwargs = {**c.kwargs, "reduction": "sum"}
    (grad,) = torch.autograd.grad(F.cross_entropy(logits, c.args[1], **kwargs), logits)
    return grad.to(c.args[0].dtype)


def ignoring_is_dropping(sol, c):
    """The mean over a batch with ignored positions equals the mean over the kept rows."""
    logits, target = c.args
    keep = target != c.kwargs["ignore_index"]
    if not bool(keep.any()):
        return
    with_ignored = sol.call("cross_entropy", logits, target, **c.kwargs)
    kept_only = sol.call("cross_entropy", logits[keep], target[keep], **c.kwargs)
    expect_close(with_ignored, kept_only, "mean with ignored rows against kept rows only")


def linear_in_smoothing(sol, c):
    """Each loss is (1 - eps) * (its loss at eps = 0) + eps * (its loss at eps = 1)."""
    logits, target = c.args
    kw = {"ignore_index": c.kwargs["ignore_index"], "reduction": "none"}
    eps = 0.35
    at = {e: answer(sol.call("cross_entropy", logits, target, label_smoothing=e, **kw),
                    f"losses at eps = {e}", target.shape)
          for e in (0.0, eps, 1.0)}
    expect_close(at[eps], (1 - eps) * at[0.0] + eps * at[1.0], "loss at eps = 0.35", scale=10)


def all_ignored(d):
    n, classes = d.size(1, 9), d.size(2, 7)
    return case(d.tensor((n, classes)), torch.full((n,), -100, dtype=torch.int64),
                label_smoothing=d.choice([0.0, 0.2]), reduction=d.choice(["mean", "sum"]))


def timing_case(d):
    """(64, 100) logits, some targets ignored, smoothing 0.1, for the performance test."""
    c = batch(d, n=64, classes=100)
    return case(*c.args, -100, 0.1, "mean")


DECLARATIONS = [
    values("mean loss with ignored positions", "cross_entropy", batch, visible=True,
           expect=torch_loss, description="reduction='mean', no smoothing, some targets -100"),
    values("label smoothing, every reduction", "cross_entropy", smoothed, visible=True,
           expect=torch_loss, cases=4),
    values("float64 and drawn settings", "cross_entropy", any_setting, cases=4,
           dtypes=("float32", "float64"), expect=torch_loss),
    shapes("reduction='none' gives one loss per row", "cross_entropy",
           lambda d: batch(d, reduction="none"), dtypes=("float32", "float64")),
    values("the gradient through your loss matches", loss_grad, smoothed, expect=torch_loss_grad,
           cases=3, description="autograd through your code against F.cross_entropy's"),
    edge("logits in the thousands", "cross_entropy",
         lambda d: batch(d, scale=3000.0, label_smoothing=d.choice([0.0, 0.1])),
         expect=torch_loss, cases=3, visible=True),
    edge("huge logits in float64, every reduction", "cross_entropy",
         lambda d: batch(d, n=d.size(2, 12), scale=2000.0,
                         reduction=d.choice(["mean", "sum", "none"])),
         expect=torch_loss, cases=2, dtypes=("float64",)),
    edge("a class index as ignore_index", "cross_entropy",
         lambda d: batch(d, classes=d.size(3, 9), ignore_index=1, ignored=0.0,
                         label_smoothing=0.1), expect=torch_loss, cases=3),
    edge("every position ignored", "cross_entropy", all_ignored, expect=torch_loss, cases=3),
    edge("a single class", "cross_entropy",
         lambda d: batch(d, classes=1, ignored=0.0, label_smoothing=0.2), expect=torch_loss,
         cases=2),
    prop("ignoring a row equals leaving it out", ignoring_is_dropping,
         lambda d: batch(d, n=d.size(3, 24), ignored=0.4, label_smoothing=0.2), cases=3),
    prop("the loss is linear in the smoothing", linear_in_smoothing, batch, cases=2),
    nontrivial("the loss is not zero", "cross_entropy", smoothed),
    performance("time against the reference", "cross_entropy", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("computes the loss itself", visible=True,
             description="no F.cross_entropy, F.nll_loss or their nn modules"),
]
