# Bug: The momentum buffer's first value is (1 - dampening) * g instead of g itself, so with dampening > 0 the first step is too small; torch.optim.SGD starts the buffer from the undamped gradient.
import torch


class SGD:
    def __init__(self, params, lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        # One buffer per parameter, created at its own first gradient.
        self.buffers = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if self.weight_decay != 0:
                # Coupled L2: the decay joins the gradient, so momentum carries it too.
                g = g.add(p, alpha=self.weight_decay)
            if self.momentum != 0:
                if self.buffers[i] is None:
                    # The first buffer is the gradient itself, undamped.
                    self.buffers[i] = g.mul(1 - self.dampening)
                else:
                    self.buffers[i].mul_(self.momentum).add_(g, alpha=1 - self.dampening)
                b = self.buffers[i]
                # Nesterov looks ahead: the gradient plus the momentum of the next step.
                g = g.add(b, alpha=self.momentum) if self.nesterov else b
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
