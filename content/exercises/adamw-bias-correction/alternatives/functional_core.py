# Style: a pure functional update helper returning new tensors; the class only keeps state
# in a dict keyed by position and writes the result back with copy_.
import torch


def adamw_update(p, g, m, v, t, lr, beta1, beta2, eps, weight_decay):
    """One AdamW update, out of place. Returns (new_p, new_m, new_v)."""
    decayed = p * (1 - lr * weight_decay)
    new_m = beta1 * m + (1 - beta1) * g
    new_v = beta2 * v + (1 - beta2) * (g * g)
    m_hat = new_m / (1 - beta1**t)
    v_hat = new_v / (1 - beta2**t)
    return decayed - lr * m_hat / (torch.sqrt(v_hat) + eps), new_m, new_v


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.param_list = list(params)
        self.hyper = dict(lr=lr, beta1=betas[0], beta2=betas[1], eps=eps,
                          weight_decay=weight_decay)
        self.state = {}

    def step(self):
        with torch.no_grad():
            for k, p in enumerate(self.param_list):
                if p.grad is None:
                    continue
                t, m, v = self.state.get(k, (0, torch.zeros_like(p), torch.zeros_like(p)))
                t += 1
                new_p, m, v = adamw_update(p.detach(), p.grad.detach(), m, v, t, **self.hyper)
                self.state[k] = (t, m, v)
                p.copy_(new_p)

    def zero_grad(self):
        for p in self.param_list:
            p.grad = None
