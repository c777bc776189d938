import torch


def distillation_loss(
    student_logits: torch.Tensor,
    teacher_logits: torch.Tensor,
    labels: torch.Tensor,
    temperature: float = 2.0,
    alpha: float = 0.5,
) -> torch.Tensor:
    """student_logits, teacher_logits: (N, C) floats; labels: (N,) int64 in [0, C).

    Returns a 0-d tensor in the logits' dtype:
    alpha * T^2 * KL(softmax(teacher / T) || softmax(student / T)) (averaged over the N rows)
    + (1 - alpha) * cross-entropy(student, labels) (at temperature 1, averaged over the rows).
    """
    raise NotImplementedError
