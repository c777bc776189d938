# Style: smooth as one matrix product with row-normalised decay weights, float64 inside; diagnose on Python lists.
import torch


def smooth(losses, beta):
    """All outputs at once: row t of W holds the weights beta^(t - i) of the inputs i <= t,
    normalised to sum to 1, which is exactly the bias correction (float64 inside)."""
    n = losses.shape[0]
    t = torch.arange(n, dtype=torch.float64)
    lag = (t[:, None] - t[None, :]).clamp(min=0)
    w = torch.tril(torch.full((n, n), float(beta), dtype=torch.float64).pow(lag))
    w = w / w.sum(dim=1, keepdim=True).clamp(min=1e-300)
    return (w @ losses.double()).to(losses.dtype)


def diagnose(train_losses, val_losses, beta=0.6, window=5, patience=3, rise_tol=0.05,
             plateau_tol=0.01, diverge_factor=1.5, underfit_ratio=0.5):  # fmt: skip
    if len(train_losses) == 0 or len(train_losses) != len(val_losses):
        raise ValueError("need two non-empty curves of one length")
    both = torch.cat([train_losses.reshape(-1), val_losses.reshape(-1)])
    if torch.isnan(both).any() or torch.isinf(both).any():
        return "diverging"
    st = smooth(train_losses, beta).tolist()
    sv = smooth(val_losses, beta).tolist()
    if st[-1] > diverge_factor * st[0]:
        return "diverging"
    m = sv.index(min(sv))
    if len(sv) - 1 - m >= patience and sv[-1] > (1 + rise_tol) * sv[m] and st[-1] < st[m]:
        return "overfitting"
    if len(st) > window:
        r = (st[-1 - window] - st[-1]) / st[-1 - window]
        if r < plateau_tol:
            return "underfitting" if st[-1] > underfit_ratio * st[0] else "plateau"
    return "healthy"
