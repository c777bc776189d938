# Bug: Epsilon is added to the bias-corrected second moment inside the square root (sqrt(v_hat + eps)) instead of outside it (sqrt(v_hat) + eps), which changes every update noticeably where gradients are small.
import torch


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.params = list(params)
        self.lr, self.eps, self.weight_decay = lr, eps, weight_decay
        self.beta1, self.beta2 = betas
        # Per parameter: its own step count and moments, created at its first update, so a
        # parameter that had no gradient for a while is still bias-corrected from its step 1.
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
            s["t"] += 1
            t = s["t"]
            # Decoupled: the decay shrinks the weight directly and never enters m or v.
            p.mul_(1 - self.lr * self.weight_decay)
            s["m"].mul_(self.beta1).add_(g, alpha=1 - self.beta1)
            s["v"].mul_(self.beta2).addcmul_(g, g, value=1 - self.beta2)
            bias1 = 1 - self.beta1**t
            bias2 = 1 - self.beta2**t
            # The same arithmetic as torch.optim.AdamW: lr / bias1 * m / (sqrt(v) / sqrt(bias2) + eps)
            denom = (s["v"] / bias2).add_(self.eps).sqrt()
            p.addcdiv_(s["m"], denom, value=-self.lr / bias1)

    def zero_grad(self):
        for p in self.params:
            p.grad = None
