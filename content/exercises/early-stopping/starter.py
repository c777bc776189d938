import torch


class EarlyStopping:
    def __init__(self, patience: int, min_delta: float = 0.0, mode: str = "min") -> None:
        """patience >= 1 steps without improvement stop training; min_delta >= 0 is the margin
        an improvement must beat; mode "min" (a loss) or "max" (an accuracy)."""
        raise NotImplementedError

    def step(
        self, metric: float | torch.Tensor, state: dict[str, torch.Tensor] | None = None
    ) -> bool:
        """Record one epoch's validation metric (a number or a 0-dim tensor) and, optionally,
        the model's state_dict at that epoch. Returns True when training should stop."""
        raise NotImplementedError
