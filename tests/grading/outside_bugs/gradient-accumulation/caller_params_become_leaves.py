# Bug: The caller's parameter tensors are made to require grad in place (p.requires_grad_()) and used directly, so gradients accumulate on the caller's tensors across calls and train's optimiser overwrites the caller's weights; a correct version works on detached clones.
import torch
import torch.nn.functional as F


def model(params, x):
    """Given. params = [w1 (H, D), b1 (H,), w2 (C, H), b2 (C,)]; x (B, D) -> logits (B, C)."""
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def leaves(params):
    return [p.requires_grad_(True) for p in params]


def accumulate(params, micro_batches):
    """Add every micro-batch's share of the large batch's gradient into .grad."""
    k = len(micro_batches)
    for x, y in micro_batches:
        # Each micro-batch's mean loss is 1/k of the large batch's (equal sizes), so the
        # sum of k backward passes is the large batch's gradient.
        loss = F.cross_entropy(model(params, x), y) / k
        loss.backward()


def accumulated_grads(params, micro_batches):
    params = leaves(params)
    accumulate(params, micro_batches)
    return [p.grad.detach().clone() for p in params]


def train(params, batches, lr, momentum):
    params = leaves(params)
    opt = torch.optim.SGD(params, lr=lr, momentum=momentum)
    out = []
    for micro_batches in batches:
        # Cleared once per optimiser step, not per micro-batch: the micro-batches' gradients
        # must add up, and the last step's must not.
        opt.zero_grad()
        accumulate(params, micro_batches)
        opt.step()
        out.append([p.detach().clone() for p in params])
    return out
