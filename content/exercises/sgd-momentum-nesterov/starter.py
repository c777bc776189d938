import torch


class SGD:
    def __init__(
        self,
        params: list[torch.Tensor],
        lr: float = 0.1,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        """params: tensors of any shapes that require grad; keep a momentum buffer for each."""
        raise NotImplementedError

    def step(self) -> None:
        """One SGD step for every parameter whose .grad is not None, in place."""
        raise NotImplementedError

    def zero_grad(self) -> None:
        """Set every parameter's .grad to None."""
        raise NotImplementedError
