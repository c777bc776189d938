import torch


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.params = list(params)
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay
        self.beta1, self.beta2 = betas
        self.state = [None] * len(self.params)

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            g = p.grad
            if self.state[i] is None:
                self.state[i] = {"t": 0, "m": torch.zeros_like(p), "v": torch.zeros_like(p)}
            s = self.state[i]
            p.mul_(1 - self.lr * self.weight_decay)
            s["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            s["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            # Counts from t = 2 at the first step: the step counter is bumped once too often.
            s["t"] += 1
            t = s["t"] + 1
            m_hat = s["m"] / (1 - self.beta1**t)
            v_hat = s["v"] / (1 - self.beta2**t)
            p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        for p in self.params:
            p.grad = None
