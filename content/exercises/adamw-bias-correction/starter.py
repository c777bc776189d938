import torch


class AdamW:
    def __init__(
        self,
        params: list[torch.Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        """params: tensors of any shapes that require grad; keep per-parameter state."""
        raise NotImplementedError

    def step(self) -> None:
        """One AdamW step for every parameter whose .grad is not None, in place."""
        raise NotImplementedError

    def zero_grad(self) -> None:
        """Set every parameter's .grad to None."""
        raise NotImplementedError
