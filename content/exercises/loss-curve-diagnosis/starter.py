import torch


def smooth(losses: torch.Tensor, beta: float) -> torch.Tensor:
    """losses: (T,) float. The bias-corrected exponential moving average, shape (T,)."""
    raise NotImplementedError


def diagnose(
    train_losses: torch.Tensor,
    val_losses: torch.Tensor,
    beta: float = 0.6,
    window: int = 5,
    patience: int = 3,
    rise_tol: float = 0.05,
    plateau_tol: float = 0.01,
    diverge_factor: float = 1.5,
    underfit_ratio: float = 0.5,
) -> str:
    """train_losses, val_losses: (T,) per-epoch losses. One of "diverging", "overfitting",
    "underfitting", "plateau", "healthy", by the statement's rules in their order."""
    raise NotImplementedError
