# Style: a small class holding T and alpha, with one method per term; xlogy-free KL from
# log-probabilities shifted by the row maximum by hand.
import torch


class _Distiller:
    def __init__(self, temperature: float, alpha: float) -> None:
        self.temperature = temperature
        self.alpha = alpha

    @staticmethod
    def _log_softmax(z: torch.Tensor) -> torch.Tensor:
        shifted = z - z.amax(dim=-1, keepdim=True)
        return shifted - shifted.exp().sum(dim=-1, keepdim=True).log()

    def soft(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        log_ps = self._log_softmax(student / self.temperature)
        log_pt = self._log_softmax(teacher / self.temperature)
        per_row = torch.sum(torch.exp(log_pt) * (log_pt - log_ps), dim=-1)
        return per_row.mean() * self.temperature**2

    def hard(self, student: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        picked = torch.take_along_dim(self._log_softmax(student), labels.unsqueeze(-1), dim=-1)
        return -picked.mean()

    def __call__(self, student, teacher, labels):
        teacher = teacher.detach()
        return self.alpha * self.soft(student, teacher) + (1 - self.alpha) * self.hard(
            student, labels
        )


def distillation_loss(student_logits, teacher_logits, labels, temperature=2.0, alpha=0.5):
    return _Distiller(temperature, alpha)(student_logits, teacher_logits, labels)
