# Style: cross-entropy written as log_softmax + gather, micro-batch sizes weighted explicitly; small trainer class and a __main__ self-test.
import torch
import torch.nn.functional as F


def model(params, x):
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def _nll_sum(logits, y):
    logp = torch.log_softmax(logits, dim=-1)
    return -logp.gather(1, y.long().unsqueeze(1)).sum()


class _Accumulator:
    def __init__(self, params):
        self.params = [q.detach().clone().requires_grad_() for q in params]

    def zero(self):
        for q in self.params:
            q.grad = None

    def run(self, micro_batches):
        n_total = 0
        for _, y in micro_batches:
            n_total += y.numel()
        for x, y in micro_batches:
            (_nll_sum(model(self.params, x), y) / n_total).backward()

    def snapshot(self, attr=None):
        if attr == "grad":
            return [q.grad.detach().clone() for q in self.params]
        return [q.detach().clone() for q in self.params]


def accumulated_grads(params, micro_batches):
    acc = _Accumulator(params)
    acc.run(micro_batches)
    return acc.snapshot("grad")


def train(params, batches, lr, momentum):
    acc = _Accumulator(params)
    opt = torch.optim.SGD(acc.params, lr=lr, momentum=momentum)
    results = []
    for micro_batches in batches:
        acc.zero()
        acc.run(micro_batches)
        opt.step()
        results.append(acc.snapshot())
    return results


if __name__ == "__main__":
    torch.manual_seed(0)
    D, H, C = 5, 7, 3
    params = [torch.randn(H, D), torch.randn(H), torch.randn(C, H), torch.randn(C)]
    x, y = torch.randn(12, D), torch.randint(0, C, (12,))
    g = accumulated_grads(params, list(zip(x.split(4), y.split(4))))
    p = [q.clone().requires_grad_() for q in params]
    F.cross_entropy(model(p, x), y).backward()
    print(all(torch.allclose(a, q.grad, atol=1e-6) for a, q in zip(g, p)))
    traj = train(params, [list(zip(x.split(4), y.split(4)))] * 3, lr=0.1, momentum=0.9)
    print(len(traj), [t.shape for t in traj[-1]])
