# Style: a loop over 0-dim tensors stacked at the end, beta^t as a running product; a hand-written first argmin.
import torch


def smooth(losses, beta):
    """The recurrence on 0-dim tensors, collected and stacked (keeps the graph)."""
    out = []
    s = torch.zeros((), dtype=losses.dtype)
    correction = 1.0
    for x in losses:
        s = s * beta + x * (1.0 - beta)
        correction *= beta  # beta^t, kept as a running product
        out.append(s / (1.0 - correction))
    if not out:
        return losses.clone()
    return torch.stack(out)


def _first_argmin(values):
    best = 0
    for i in range(1, len(values)):
        if values[i] < values[best]:
            best = i
    return best


def diagnose(train_losses, val_losses, beta=0.6, window=5, patience=3, rise_tol=0.05,
             plateau_tol=0.01, diverge_factor=1.5, underfit_ratio=0.5):  # fmt: skip
    n = train_losses.shape[0]
    if n == 0 or val_losses.shape[0] != n:
        raise ValueError(f"lengths {n} and {val_losses.shape[0]}")
    if not bool(torch.isfinite(torch.stack([train_losses, val_losses])).all()):
        return "diverging"
    with torch.no_grad():
        st = smooth(train_losses.to(torch.float64), beta)
        sv = smooth(val_losses.to(torch.float64), beta)
    last = n - 1
    if float(st[last]) > diverge_factor * float(st[0]):
        return "diverging"
    m = _first_argmin(sv.tolist())
    rose = float(sv[last]) > (1.0 + rise_tol) * float(sv[m])
    if last - m >= patience and rose and float(st[last]) < float(st[m]):
        return "overfitting"
    if last >= window:
        gain = float(st[last - window] - st[last]) / float(st[last - window])
        if gain < plateau_tol:
            stuck_high = float(st[last]) > underfit_ratio * float(st[0])
            return "underfitting" if stuck_high else "plateau"
    return "healthy"
