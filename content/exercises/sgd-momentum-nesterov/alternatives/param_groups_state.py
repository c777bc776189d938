# Style: torch.optim-like layout: a param group dict and a state dict keyed by the parameter; out-of-place math, copy_ back; __all__.
import torch

__all__ = ["SGD"]


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
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError("nesterov needs momentum > 0 and dampening == 0")
        self.group = {
            "params": list(params),
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
        }
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}  # tensors hash by identity

    def _direction(self, p: torch.Tensor, grad: torch.Tensor) -> torch.Tensor:
        grp = self.group
        g = torch.add(grad, p, alpha=grp["weight_decay"]) if grp["weight_decay"] else grad
        mu = grp["momentum"]
        if mu == 0:
            return g
        st = self.state.setdefault(p, {})
        if "momentum_buffer" not in st:
            st["momentum_buffer"] = torch.clone(g).detach()
        else:
            st["momentum_buffer"] = mu * st["momentum_buffer"] + (1.0 - grp["dampening"]) * g
        buf = st["momentum_buffer"]
        return g + mu * buf if grp["nesterov"] else buf

    def step(self) -> None:
        with torch.no_grad():
            for p in self.group["params"]:
                if p.grad is not None:
                    p.copy_(p - self.group["lr"] * self._direction(p, p.grad))

    def zero_grad(self) -> None:
        for p in self.group["params"]:
            p.grad = None
