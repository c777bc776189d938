import torch
import torch.nn.functional as F

from sandbox.grading import api_rule, case, edge, expect_close, nontrivial, performance, prop
from sandbox.grading import shapes, trajectory, values


def net(d):
    dims = d.size(1, 7), d.size(1, 9), d.size(2, 5)  # D, H, C
    d_in, hidden, classes = dims
    params = [d.weights(d_in, hidden), d.tensor((hidden,), low=-0.5, high=0.5),
              d.weights(hidden, classes), d.tensor((classes,), low=-0.5, high=0.5)]
    return params, dims


def micro_batches(d, dims, k, b):
    d_in, _, classes = dims
    return [(d.tensor((b, d_in), normal=True), d.integers((b,), 0, classes)) for _ in range(k)]


def one_batch(d, *, k=None, b=None):
    params, dims = net(d)
    k = k if k is not None else d.size(1, 5)
    b = b if b is not None else d.size(1, 6)
    return case(params, micro_batches(d, dims, k, b))


def several_steps(d, *, k=None):
    params, dims = net(d)
    k = k if k is not None else d.size(2, 4)
    b = d.size(1, 5)
    batches = [micro_batches(d, dims, k, b) for _ in range(3)]
    return case(params, batches, d.choice([0.05, 0.1, 0.5]), d.choice([0.0, 0.9]))


def model(params, x):
    w1, b1, w2, b2 = params
    return torch.relu(x @ w1.T + b1) @ w2.T + b2


def big_batch_grads(c):
    """The large batch's gradient, in the grader: one forward and backward on everything."""
    params = [p.clone().requires_grad_(True) for p in c.args[0]]
    x = torch.cat([x for x, _ in c.args[1]])
    y = torch.cat([y for _, y in c.args[1]])
    F.cross_entropy(model(params, x), y).backward()
    return [p.grad for p in params]


def big_batch_sgd(c):
    """torch.optim.SGD on the concatenated batches, one step each."""
    params_, batches, lr, momentum = c.args
    params = [p.clone().requires_grad_(True) for p in params_]
    opt = torch.optim.SGD(params, lr=lr, momentum=momentum)
    out = []
    for micro in batches:
        opt.zero_grad()
        x = torch.cat([x for x, _ in micro])
        y = torch.cat([y for _, y in micro])
        F.cross_entropy(model(params, x), y).backward()
        opt.step()
        out.append([p.detach().clone() for p in params])
    return out


def split_does_not_matter(sol, c):
    """The same examples in k micro-batches or in one give the same gradient."""
    params, micro = c.args
    x = torch.cat([x for x, _ in micro])
    y = torch.cat([y for _, y in micro])
    whole = sol.call("accumulated_grads", params, [(x, y)])
    split = sol.call("accumulated_grads", params, micro)
    for i, (a, b) in enumerate(zip(split, whole)):
        expect_close(a, b, f"gradient {i}: {len(micro)} micro-batches against one", scale=10)


def run_train(sol, c):
    return sol.call("train", *c.args)


def timing_case(d):
    """A 32-64-10 network and two micro-batches of 16, for the performance test."""
    dims = 32, 64, 10
    params = [d.weights(32, 64), d.tensor((64,), low=-0.5, high=0.5),
              d.weights(64, 10), d.tensor((10,), low=-0.5, high=0.5)]
    return case(params, micro_batches(d, dims, 2, 16))


DECLARATIONS = [
    values("gradients equal the large batch's", "accumulated_grads", one_batch,
           expect=big_batch_grads, visible=True, cases=3,
           description="k micro-batches of b examples against one backward on all k*b"),
    values("more micro-batches match the reference", "accumulated_grads", one_batch, cases=3),
    edge("a single micro-batch", "accumulated_grads", lambda d: one_batch(d, k=1),
         expect=big_batch_grads, cases=2),
    edge("micro-batches of one example", "accumulated_grads", lambda d: one_batch(d, b=1),
         expect=big_batch_grads, cases=2),
    trajectory("three optimiser steps equal large-batch SGD", run_train, several_steps,
               expect=big_batch_sgd, visible=True, cases=2,
               description="one SGD step per list of micro-batches, with and without momentum"),
    trajectory("steps with momentum match the reference", run_train,
               lambda d: several_steps(d, k=3), cases=2),
    shapes("one gradient per parameter, same shapes", "accumulated_grads", one_batch,
           dtypes=("float32", "float64"), cases=2),
    prop("splitting the batch does not change the gradient", split_does_not_matter, one_batch,
         cases=3),
    nontrivial("the gradient is not zero", "accumulated_grads", one_batch),
    performance("time against the reference", "accumulated_grads", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("accumulates with backward, no functional autograd", visible=True,
             description="one .backward() per micro-batch; no torch.autograd.grad or torch.func"),
]
