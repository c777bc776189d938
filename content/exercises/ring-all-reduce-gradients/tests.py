import torch

from sandbox.grading import api_rule, case, edge, fail, nontrivial, performance, prop, shapes
from sandbox.grading import values


def ranks(d, *, world=None, spread=1.0):
    """W tensors of one drawn shape, values spread over e^(+-spread) in magnitude: wide
    spreads make the order of a sum show in its last bits (the same-bits property), gentle
    ones keep float32 rounding within the values tests' tolerance."""
    w = world if world is not None else d.size(1, 6)
    shape = d.shape((1, 3), high=7)
    spread = torch.exp(d.tensor((w, *shape), low=-spread, high=spread, dtype=torch.float64))
    values_ = d.tensor((w, *shape), normal=True) * spread.to(d.dtype)
    return case([values_[r].clone() for r in range(w)])


def trusted_sum(c):
    total = torch.stack(c.args[0]).double().sum(0).to(c.args[0][0].dtype)
    return [total.clone() for _ in c.args[0]]


def shards(d, *, world=None):
    """A linear model's full-batch gradient against the average of W shards' gradients: the
    per-rank gradients are computed here (trusted), then averaged by the learner."""
    w = world if world is not None else d.size(1, 5)
    d_in, d_out, per_rank = d.size(1, 6), d.size(1, 4), d.size(1, 4)
    weight, bias = d.weights(d_in, d_out), d.tensor((d_out,), low=-0.5, high=0.5)
    x = d.tensor((w * per_rank, d_in), normal=True)
    y = d.tensor((w * per_rank, d_out), normal=True)
    per_rank_grads = [grads_of(weight, bias, xs, ys)
                      for xs, ys in zip(x.split(per_rank), y.split(per_rank))]
    return case(per_rank_grads, data={"full": grads_of(weight, bias, x, y), "world": w})


def grads_of(weight, bias, x, y):
    w, b = weight.clone().requires_grad_(True), bias.clone().requires_grad_(True)
    torch.nn.functional.mse_loss(x @ w.T + b, y).backward()
    return [w.grad, b.grad]


def full_batch_everywhere(c):
    return [list(c.data["full"]) for _ in range(c.data["world"])]


def same_bits_on_every_rank(sol, c):
    out = sol.call("ring_all_reduce", *c.args)
    if len(out) != len(c.args[0]):
        fail(f"{len(out)} results for {len(c.args[0])} ranks")
    for r in range(1, len(out)):
        if not torch.equal(out[r], out[0]):
            diff = (out[r].double() - out[0].double()).abs().max().item()
            fail(f"rank {r} differs from rank 0 (by up to {diff:.3g}): every rank must hold "
                 "the same bits")


def inputs_untouched(sol, c):
    """Reducing twice gives the same result: nothing depends on state left behind."""
    first = sol.call("ring_all_reduce", *c.args)
    second = sol.call("ring_all_reduce", *c.args)
    for r, (a, b) in enumerate(zip(first, second)):
        if not torch.equal(a, b):
            fail(f"rank {r}'s result changed between two identical calls")


def timing_case(d):
    """Four ranks of a (64, 64) gradient, for the performance test."""
    return case([d.tensor((64, 64), normal=True) for _ in range(4)])


DECLARATIONS = [
    values("two ranks", "ring_all_reduce", lambda d: ranks(d, world=2), expect=trusted_sum,
           visible=True, cases=3, description="W = 2: every rank ends with the sum"),
    values("W ranks match the sum", "ring_all_reduce", ranks, expect=trusted_sum, cases=4,
           dtypes=("float32", "float64")),
    values("averaged gradients equal the full batch's", "average_gradients", shards,
           expect=full_batch_everywhere, visible=True, cases=3,
           description="gradients of W equal shards, averaged, against one backward on all"),
    values("two-rank data parallelism", "average_gradients", lambda d: shards(d, world=2),
           expect=full_batch_everywhere, cases=2),
    edge("fewer elements than ranks", "ring_all_reduce",
         lambda d: case([d.tensor((2,)) for _ in range(d.choice([3, 5]))]), expect=trusted_sum,
         cases=2, description="some chunks are empty"),
    edge("one rank", "ring_all_reduce", lambda d: ranks(d, world=1), expect=trusted_sum,
         cases=1),
    edge("many ranks", "ring_all_reduce", lambda d: ranks(d, world=d.choice([7, 8])),
         expect=trusted_sum, cases=2),
    shapes("each rank keeps the tensor's shape and dtype", "ring_all_reduce", ranks,
           dtypes=("float32", "float64"), cases=2),
    prop("every rank holds the same bits", same_bits_on_every_rank,
         lambda d: ranks(d, world=d.choice([3, 4, 5, 6]), spread=6.0), cases=4),
    prop("a second call gives the same result", inputs_untouched, ranks, cases=2),
    nontrivial("the sum is not zero", "ring_all_reduce", ranks),
    performance("time against the reference", "ring_all_reduce", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("simulates the ranks itself", visible=True,
             description="no torch.distributed"),
]
