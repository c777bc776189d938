# Bug: The relative improvement over the window divides by the last smoothed loss st[L] instead of the loss window epochs earlier, st[L - window], so r is inflated and borderline stalls read as progress; a correct version divides by st[L - window].
import torch


def smooth(losses, beta):
    # A running average started at 0 is biased towards 0 early on; dividing by 1 - beta^t
    # (the total weight the average has given so far) removes the bias.
    out = torch.empty_like(losses)
    s = losses.new_zeros(())
    for t in range(losses.shape[0]):
        s = beta * s + (1 - beta) * losses[t]
        out[t] = s / (1 - beta ** (t + 1))
    return out


def diagnose(
    train_losses,
    val_losses,
    beta=0.6,
    window=5,
    patience=3,
    rise_tol=0.05,
    plateau_tol=0.01,
    diverge_factor=1.5,
    underfit_ratio=0.5,
):
    if train_losses.shape != val_losses.shape or train_losses.numel() == 0:
        raise ValueError("train and val curves must be non-empty and of the same length")
    # 1. Diverging: a NaN or inf anywhere, or a smoothed train loss that ended well above its start.
    if not (torch.isfinite(train_losses).all() and torch.isfinite(val_losses).all()):
        return "diverging"
    st, sv = smooth(train_losses, beta), smooth(val_losses, beta)
    last = st.shape[0] - 1
    if st[last] > diverge_factor * st[0]:
        return "diverging"
    # 2. Overfitting: val bottomed out at least `patience` epochs ago and has risen by more than
    #    rise_tol (relative) since, while train kept falling.
    m = int(torch.argmin(sv))  # the first minimum
    if last - m >= patience and sv[last] > (1 + rise_tol) * sv[m] and st[last] < st[m]:
        return "overfitting"
    # 3./4. A train loss that improved by less than plateau_tol (relative) over the last
    #    `window` epochs: stuck high is underfitting, stuck after real progress a plateau.
    if last >= window:
        before = st[last - window]
        if (before - st[last]) / st[last] < plateau_tol:
            return "underfitting" if st[last] > underfit_ratio * st[0] else "plateau"
    return "healthy"
