import torch
import torch.nn.functional as F

from sandbox.grading import (
    api_rule,
    case,
    edge,
    expect_close,
    fail,
    gradients,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)


def logits_pair(d, n=None, classes=None, scale=3.0):
    """Student and teacher logits (the teacher more confident), labels in [0, C)."""
    n = n if n is not None else d.size(1, 24)
    classes = classes if classes is not None else d.size(2, 17)
    student = d.tensor((n, classes), low=-scale, high=scale)
    teacher = d.tensor((n, classes), low=-2 * scale, high=2 * scale)
    labels = d.integers((n,), 0, classes)
    return student, teacher, labels


def batch(d, **kwargs):
    student, teacher, labels = logits_pair(d, **kwargs)
    return case(student, teacher, labels, temperature=d.choice([1.0, 2.0, 4.0, 0.5, 3.0]),
                alpha=d.choice([0.1, 0.5, 0.7, 0.9]))


def default_settings(d):
    return case(*logits_pair(d))


def extreme_alpha(d):
    student, teacher, labels = logits_pair(d)
    return case(student, teacher, labels, temperature=d.choice([2.0, 5.0]),
                alpha=d.choice([0.0, 1.0]))


def huge(d):
    student, teacher, labels = logits_pair(d, n=d.size(1, 12), scale=500.0)
    return case(student, teacher, labels, temperature=d.choice([1.0, 3.0]),
                alpha=d.choice([0.3, 0.8]))


def one_class(d):
    student, teacher, labels = logits_pair(d, classes=1)
    return case(student, teacher, labels, temperature=2.0, alpha=0.4)


def one_row(d):
    student, teacher, labels = logits_pair(d, n=1)
    return case(student, teacher, labels, temperature=d.choice([2.0, 4.0]), alpha=0.6)


def trusted(c):
    """F.kl_div (batchmean) and F.cross_entropy in float64, cast back to the case's dtype."""
    student, teacher, labels = c.args
    t, alpha = c.kwargs.get("temperature", 2.0), c.kwargs.get("alpha", 0.5)
    s64, t64 = student.double(), teacher.double()
    kl = F.kl_div(F.log_softmax(s64 / t, dim=-1), F.log_softmax(t64 / t, dim=-1),
                  reduction="batchmean", log_target=True)
    ce = F.cross_entropy(s64, labels)
    return (alpha * t * t * kl + (1 - alpha) * ce).to(student.dtype)


def student_only(d):
    """The teacher and labels as keywords: the gradient check moves the student alone."""
    student, teacher, labels = logits_pair(d, n=d.size(1, 7), classes=d.size(2, 6))
    return case(student, teacher_logits=teacher, labels=labels,
                temperature=d.choice([1.0, 2.0, 4.0]), alpha=d.choice([0.3, 0.7]))


def teacher_gets_no_gradient(sol, c):
    """Backward through the loss: the teacher's logits get no gradient (None or zeros)."""
    student, teacher, labels = c.args
    dtype = student.dtype
    _, grads = sol.vjp("distillation_loss", (student, teacher, labels),
                       torch.ones((), dtype=dtype), c.kwargs)
    if not isinstance(grads, list) or len(grads) != 3:
        fail("the backward request did not answer three gradients")
    if grads[1] is not None and bool((grads[1] != 0).any()):
        fail("a gradient flowed into the teacher's logits: the teacher must be a fixed target")
    if grads[0] is None or not bool((grads[0] != 0).any()):
        fail("no gradient reached the student's logits")


def zero_when_student_copies_teacher(sol, c):
    """alpha = 1 and the student equal to the teacher: the KL term, and the loss, are 0."""
    _, teacher, labels = c.args
    loss = sol.call("distillation_loss", teacher.clone(), teacher, labels,
                    temperature=c.kwargs["temperature"], alpha=1.0)
    if not isinstance(loss, torch.Tensor):
        fail(f"expected a tensor, got {type(loss).__name__}")
    expect_close(loss, torch.zeros((), dtype=teacher.dtype), "the loss of a perfect copy")


def soft_term_is_nonnegative(sol, c):
    """KL is never negative: with alpha = 1 the loss is >= 0 for any pair of logits."""
    loss = sol.call("distillation_loss", *c.args, temperature=c.kwargs["temperature"],
                    alpha=1.0)
    if not isinstance(loss, torch.Tensor):
        fail(f"expected a tensor, got {type(loss).__name__}")
    if float(loss) < -1e-5:
        fail(f"the KL term came out negative ({float(loss):.3g})")


def timing_case(d):
    student, teacher, labels = logits_pair(d, n=64, classes=100)
    return case(student, teacher, labels, 4.0, 0.7)


DECLARATIONS = [
    values("the loss on small batches", "distillation_loss", batch, visible=True,
           expect=trusted, description="drawn temperatures and alphas, against F.kl_div + "
           "F.cross_entropy in the grader"),
    values("default temperature and alpha", "distillation_loss", default_settings,
           visible=True, expect=trusted, description="T = 2, alpha = 0.5 when left out"),
    values("float32 and float64, drawn settings", "distillation_loss", batch, cases=4,
           dtypes=("float32", "float64"), expect=trusted),
    shapes("a 0-d tensor in the logits' dtype", "distillation_loss", batch,
           dtypes=("float32", "float64")),
    gradients("gradients with respect to the student", "distillation_loss", student_only,
              cases=3, description="the teacher and labels passed as keywords"),
    prop("no gradient flows into the teacher", teacher_gets_no_gradient, batch, cases=2,
         dtypes=("float64",)),
    edge("alpha = 0 (hard labels only) and alpha = 1 (soft targets only)",
         "distillation_loss", extreme_alpha, expect=trusted, cases=4),
    edge("logits in the hundreds", "distillation_loss", huge, expect=trusted, cases=3,
         dtypes=("float32", "float64")),
    edge("a single class", "distillation_loss", one_class, expect=trusted, cases=2),
    edge("a single row", "distillation_loss", one_row, expect=trusted, cases=2),
    prop("a student equal to the teacher has no soft loss", zero_when_student_copies_teacher,
         batch, cases=2),
    prop("the soft term is never negative", soft_term_is_nonnegative, batch, cases=3),
    nontrivial("the loss is not zero", "distillation_loss", batch),
    performance("time against the reference", "distillation_loss", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("computes KL and cross-entropy itself", visible=True,
             description="no F.kl_div, F.cross_entropy, F.nll_loss or their nn modules"),
]
