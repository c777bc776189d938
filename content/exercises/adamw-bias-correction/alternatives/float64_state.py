# Style: module-level __all__; moments kept in float64 per parameter, result cast back on copy.
import torch

__all__ = ["AdamW"]


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.params = list(params)
        self.lr = float(lr)
        self.beta1, self.beta2 = float(betas[0]), float(betas[1])
        self.eps = float(eps)
        self.weight_decay = float(weight_decay)
        # one slot per parameter, in the order given: (steps taken, m, v)
        self.steps = [0] * len(self.params)
        self.m = [None] * len(self.params)
        self.v = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad.detach().to(torch.float64)
            w = p.detach().to(torch.float64)
            if self.m[i] is None:
                self.m[i] = torch.zeros_like(g)
                self.v[i] = torch.zeros_like(g)
            self.steps[i] += 1
            t = self.steps[i]

            w = w * (1.0 - self.lr * self.weight_decay)
            self.m[i] = self.beta1 * self.m[i] + (1.0 - self.beta1) * g
            self.v[i] = self.beta2 * self.v[i] + (1.0 - self.beta2) * g * g
            m_hat = self.m[i] / (1.0 - self.beta1**t)
            v_hat = self.v[i] / (1.0 - self.beta2**t)
            w = w - self.lr * m_hat / (v_hat.sqrt() + self.eps)
            p.copy_(w.to(p.dtype))

    def zero_grad(self):
        for p in self.params:
            p.grad = None
