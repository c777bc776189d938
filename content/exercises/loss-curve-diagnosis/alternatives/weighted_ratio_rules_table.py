# Style: smooth as a ratio of two undebiased running sums; diagnose as an ordered table of rule functions; __all__ and a self-test.
import math

import torch

__all__ = ["smooth", "diagnose"]


def smooth(losses: torch.Tensor, beta: float) -> torch.Tensor:
    # The debiased EMA is a ratio of two undebiased sums with the same decay:
    # sum beta^(t-i) x_i / sum beta^(t-i). Neither needs a correction.
    num = losses.new_zeros(())
    den = 0.0
    outs = []
    for x in losses.unbind(0):
        num = beta * num + x
        den = beta * den + 1.0
        outs.append(num / den)
    return torch.stack(outs) if outs else losses.new_empty((0,))


def _diverging(ctx):
    return ctx["st"][-1] > ctx["diverge_factor"] * ctx["st"][0]


def _overfitting(ctx):
    sv, st, last = ctx["sv"], ctx["st"], len(ctx["sv"]) - 1
    m = min(range(len(sv)), key=lambda i: (sv[i], i))
    return (last - m >= ctx["patience"] and sv[last] > (1 + ctx["rise_tol"]) * sv[m]
            and st[last] < st[m])  # fmt: skip


def _stalled(ctx):
    st, w = ctx["st"], ctx["window"]
    if len(st) - 1 < w:
        return False
    return (st[-1 - w] - st[-1]) / st[-1 - w] < ctx["plateau_tol"]


def _underfitting(ctx):
    return _stalled(ctx) and ctx["st"][-1] > ctx["underfit_ratio"] * ctx["st"][0]


RULES = [("diverging", _diverging), ("overfitting", _overfitting),
         ("underfitting", _underfitting), ("plateau", _stalled)]  # fmt: skip


def diagnose(train_losses, val_losses, beta=0.6, window=5, patience=3, rise_tol=0.05,
             plateau_tol=0.01, diverge_factor=1.5, underfit_ratio=0.5):  # fmt: skip
    if train_losses.numel() == 0 or train_losses.numel() != val_losses.numel():
        raise ValueError("curves must be non-empty and equally long")
    raw = train_losses.tolist() + val_losses.tolist()
    if not all(math.isfinite(v) for v in raw):
        return "diverging"
    ctx = {"st": smooth(train_losses.double(), beta).tolist(),
           "sv": smooth(val_losses.double(), beta).tolist(), "window": window,
           "patience": patience, "rise_tol": rise_tol, "plateau_tol": plateau_tol,
           "diverge_factor": diverge_factor, "underfit_ratio": underfit_ratio}  # fmt: skip
    for label, rule in RULES:
        if rule(ctx):
            return label
    return "healthy"


if __name__ == "__main__":
    print(smooth(torch.tensor([4.0, 2.0, 3.0, 1.0]), 0.5))
