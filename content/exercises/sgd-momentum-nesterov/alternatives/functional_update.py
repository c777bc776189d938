# Style: a pure update function returning (new value, new buffer); the class only stores state; self-test.
import torch


def sgd_update(
    p: torch.Tensor,
    g: torch.Tensor,
    buf: torch.Tensor | None,
    *,
    lr: float,
    momentum: float,
    dampening: float,
    weight_decay: float,
    nesterov: bool,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One step for one parameter, out of place. Returns (new p, new momentum buffer)."""
    g = g + weight_decay * p if weight_decay else g
    if not momentum:
        return p - lr * g, None
    new_buf = g.clone() if buf is None else momentum * buf + (1.0 - dampening) * g
    direction = g + momentum * new_buf if nesterov else new_buf
    return p - lr * direction, new_buf


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
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("nesterov=True needs momentum > 0 and dampening == 0")
        self.params = list(params)
        self.hyper = dict(
            lr=lr, momentum=momentum, dampening=dampening,
            weight_decay=weight_decay, nesterov=nesterov,
        )
        self.state: dict[int, torch.Tensor | None] = {}  # keyed by position in self.params

    def step(self) -> None:
        with torch.no_grad():
            for idx, p in enumerate(self.params):
                if p.grad is None:
                    continue
                new_p, self.state[idx] = sgd_update(
                    p.detach(), p.grad.detach(), self.state.get(idx), **self.hyper
                )
                p.copy_(new_p)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


if __name__ == "__main__":
    w = torch.tensor([1.0], requires_grad=True)
    opt = SGD([w], lr=0.1, momentum=0.9, nesterov=True)
    for expected in (0.81, 0.539):
        w.grad = torch.tensor([1.0])
        opt.step()
        print(w, "expected", expected)
    opt.zero_grad()
    print(w.grad)
