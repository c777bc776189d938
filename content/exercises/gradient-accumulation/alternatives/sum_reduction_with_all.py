# Style: summed (not averaged) per-micro-batch losses divided by the total count; __all__ lists the public names.
import torch
import torch.nn.functional as F

__all__ = ["model", "accumulated_grads", "train"]


def model(params, x):
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def _leaf_copies(params):
    return [p.detach().clone().requires_grad_(True) for p in params]


def _accumulate(leaves, micro_batches):
    """Sum-reduced loss of each micro-batch, divided by the number of examples in all of
    them, so that the accumulated .grad is the gradient of the overall mean."""
    total = sum(int(y.shape[0]) for _, y in micro_batches)
    for x, y in micro_batches:
        loss = F.cross_entropy(model(leaves, x), y, reduction="sum") / total
        loss.backward()


def accumulated_grads(params, micro_batches):
    leaves = _leaf_copies(params)
    _accumulate(leaves, micro_batches)
    return [p.grad.detach().clone() for p in leaves]


def train(params, batches, lr, momentum):
    leaves = _leaf_copies(params)
    opt = torch.optim.SGD(leaves, lr=lr, momentum=momentum)
    history = []
    for micro_batches in batches:
        opt.zero_grad(set_to_none=True)
        _accumulate(leaves, micro_batches)
        opt.step()
        history.append([p.detach().clone() for p in leaves])
    return history
