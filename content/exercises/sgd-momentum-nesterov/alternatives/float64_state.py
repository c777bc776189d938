# Style: per-parameter state objects; arithmetic in float64, written back in the parameter's dtype.
import torch


class _ParamState:
    """The momentum buffer of one parameter, kept in float64."""

    __slots__ = ("buf",)

    def __init__(self) -> None:
        self.buf: torch.Tensor | None = None


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
        if nesterov and not (momentum > 0 and dampening == 0):
            raise ValueError("Nesterov requires momentum > 0 and dampening = 0")
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self._states = [_ParamState() for _ in self.params]

    def _direction(self, p64: torch.Tensor, g64: torch.Tensor, st: _ParamState) -> torch.Tensor:
        g64 = g64 + self.weight_decay * p64
        if self.momentum == 0:
            return g64
        if st.buf is None:
            st.buf = g64.clone()
        else:
            st.buf = self.momentum * st.buf + (1 - self.dampening) * g64
        if self.nesterov:
            return g64 + self.momentum * st.buf
        return st.buf

    def step(self) -> None:
        with torch.no_grad():
            for p, st in zip(self.params, self._states):
                if p.grad is None:
                    continue
                p64 = p.detach().to(torch.float64)
                d = self._direction(p64, p.grad.detach().to(torch.float64), st)
                p.copy_((p64 - self.lr * d).to(p.dtype))

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None
