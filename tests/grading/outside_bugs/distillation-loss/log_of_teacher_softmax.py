# Bug: The teacher's probabilities come from softmax and the KL takes torch.log of them, so where a teacher probability underflows to 0 (logits in the hundreds) 0 · log 0 gives NaN; a correct version uses log_softmax and never logs a probability.
import torch


def distillation_loss(student_logits, teacher_logits, labels, temperature=2.0, alpha=0.5):
    t = temperature
    # The teacher is a fixed target: no gradient may reach it (nor the teacher's weights).
    teacher_logits = teacher_logits.detach()
    # Soft targets at temperature T; log_softmax (x - logsumexp) stays finite for huge logits,
    # and p_t * (log p_t - log p_s) avoids log(0) where a probability underflows.
    p_teacher = torch.softmax(teacher_logits / t, dim=-1)
    log_p_student = torch.log_softmax(student_logits / t, dim=-1)
    kl_rows = (p_teacher * (torch.log(p_teacher) - log_p_student)).sum(dim=-1)
    # batchmean: the sum over classes, averaged over the rows (not over every element).
    kl = kl_rows.mean()
    # The gradient of the soft term scales like 1 / T^2; multiplying by T^2 keeps its weight
    # against the hard term the same whatever the temperature.
    soft = t * t * kl
    # The hard term: ordinary cross-entropy with the labels, at temperature 1.
    log_p_hard = torch.log_softmax(student_logits, dim=-1)
    hard = -log_p_hard.gather(-1, labels[:, None]).mean()
    return alpha * soft + (1.0 - alpha) * hard
