# Style: float64 inside, log-probabilities written as z - logsumexp(z), the hard term as
# logsumexp(z) - z[label]; cast back at the end.
import torch


def _log_probs(z: torch.Tensor) -> torch.Tensor:
    return z - torch.logsumexp(z, dim=1, keepdim=True)


def distillation_loss(student_logits, teacher_logits, labels, temperature=2.0, alpha=0.5):
    s = student_logits.to(torch.float64)
    with torch.no_grad():
        t = teacher_logits.to(torch.float64)
        log_pt = _log_probs(t / temperature)
        pt = log_pt.exp()
    log_ps = _log_probs(s / temperature)
    kl = (pt * (log_pt - log_ps)).sum() / s.shape[0]
    rows = torch.arange(s.shape[0], device=s.device)
    ce = (torch.logsumexp(s, dim=1) - s[rows, labels]).mean()
    loss = alpha * temperature**2 * kl + (1 - alpha) * ce
    return loss.to(student_logits.dtype)
