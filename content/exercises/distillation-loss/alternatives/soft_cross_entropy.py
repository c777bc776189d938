# Style: KL written as soft cross-entropy minus the teacher's entropy; one-hot targets for the
# hard term; einsum for the row sums; a self-test block.
import torch
import torch.nn.functional as F

__all__ = ["distillation_loss"]


def distillation_loss(student_logits, teacher_logits, labels, temperature=2.0, alpha=0.5):
    T = float(temperature)
    n, num_classes = student_logits.shape
    log_pt = F.log_softmax(teacher_logits.detach() / T, dim=-1)
    pt = log_pt.exp()
    log_ps = F.log_softmax(student_logits / T, dim=-1)
    soft_ce = -torch.einsum("nc,nc->", pt, log_ps) / n
    teacher_entropy = -torch.einsum("nc,nc->", pt, log_pt) / n
    kl = soft_ce - teacher_entropy
    onehot = F.one_hot(labels, num_classes).to(student_logits.dtype)
    hard = -torch.einsum("nc,nc->", onehot, F.log_softmax(student_logits, dim=-1)) / n
    return alpha * (T * T) * kl + (1.0 - alpha) * hard


if __name__ == "__main__":
    s = torch.tensor([[2.0, 0.5, -1.0], [0.0, 1.0, 0.0]])
    t = torch.tensor([[3.0, 1.0, -2.0], [0.5, 0.5, 2.0]])
    print(distillation_loss(s, t, torch.tensor([0, 2])))  # tensor(0.6280)
