# Style: a small dataclass per parameter, moments updated in place with lerp_, the corrected
# m_hat and v_hat formed explicitly as the statement writes them; self-test block.
from dataclasses import dataclass

import torch


@dataclass
class _Slot:
    exp_avg: torch.Tensor
    exp_avg_sq: torch.Tensor
    t: int = 0


class AdamW:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self._slots: dict[int, _Slot] = {}

    def _slot(self, index, p):
        if index not in self._slots:
            self._slots[index] = _Slot(
                torch.zeros_like(p, memory_format=torch.preserve_format),
                torch.zeros_like(p, memory_format=torch.preserve_format),
            )
        return self._slots[index]

    def step(self):
        b1, b2 = self.betas
        with torch.no_grad():
            for index, p in enumerate(self.params):
                grad = p.grad
                if grad is None:
                    continue
                s = self._slot(index, p)
                s.t += 1
                p.mul_(1 - self.lr * self.weight_decay)
                s.exp_avg.lerp_(grad, 1 - b1)  # b1*m + (1-b1)*g
                s.exp_avg_sq.lerp_(grad * grad, 1 - b2)
                m_hat = s.exp_avg / (1 - b1**s.t)
                v_hat = s.exp_avg_sq / (1 - b2**s.t)
                p.sub_(self.lr * m_hat / (v_hat.sqrt() + self.eps))

    def zero_grad(self):
        for p in self.params:
            p.grad = None


if __name__ == "__main__":
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    opt = AdamW([w], lr=0.1, weight_decay=0.0)
    w.grad = torch.tensor([0.5, -0.5])
    opt.step()
    print(w)  # tensor([ 0.9000, -1.9000], requires_grad=True)
    opt.zero_grad()
    print(w.grad)  # None
