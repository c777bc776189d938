# Bug: The momentum buffer is decayed (b ← momentum · b) at every step before the gradient is checked, so a parameter whose .grad is None on a later step still has its buffer shrunk though it is skipped; a correct step leaves a skipped parameter's buffer untouched.
import torch


class SGD:
    def __init__(self, params, lr=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening = 0")
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.buffers = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            b = self.buffers[i]
            if self.momentum != 0 and b is not None:
                # Friction first: the velocity decays every step.
                b.mul_(self.momentum)
            if p.grad is None:
                continue
            g = p.grad
            if self.weight_decay != 0:
                g = g.add(p, alpha=self.weight_decay)
            if self.momentum != 0:
                if b is None:
                    b = self.buffers[i] = g.clone()
                else:
                    b.add_(g, alpha=1 - self.dampening)
                g = g.add(b, alpha=self.momentum) if self.nesterov else b
            p.add_(g, alpha=-self.lr)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
