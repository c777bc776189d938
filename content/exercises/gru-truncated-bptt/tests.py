import torch
from torch import nn

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values

NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def weights(d, inp, hid):
    bound = hid**-0.5
    return [
        d.tensor((3 * hid, inp), low=-bound, high=bound),
        d.tensor((3 * hid, hid), low=-bound, high=bound),
        d.tensor((3 * hid,), low=-bound, high=bound),
        d.tensor((3 * hid,), low=-bound, high=bound),
    ]


def sequence(d, *, k=None, low=1, high=9):
    """A sequence, weights, a window length k and a grad_output for every step."""
    b, inp, hid, t = d.size(1, 3), d.size(1, 5), d.size(1, 6), d.size(low, high)
    x = d.tensor((b, t, inp), low=-2, high=2)
    h0 = d.tensor((b, hid), low=-1, high=1)
    window = k if k is not None else d.integer(1, max(1, t - 1))
    return case(x, h0, *weights(d, inp, hid), k=window,
                data={"grad_out": d.tensor((b, t, hid), normal=True)})  # fmt: skip


def one_step(d):
    b, inp, hid = d.size(1, 4), d.size(1, 6), d.size(1, 7)
    return case(d.tensor((b, inp)), d.tensor((b, hid)), *weights(d, inp, hid))


def torch_cell(c):
    x, h, *w = c.args
    cell = nn.GRUCell(x.shape[1], h.shape[1], dtype=x.dtype)
    with torch.no_grad():
        for name, value in zip(NAMES, w):
            getattr(cell, name).copy_(value)
    return cell(x, h).detach()


def torch_tbptt_grads(c):
    """nn.GRUCell with the same weights, cut at the same steps, differentiated by autograd in
    the grader's process: the gradients of x, h0 and the four weights."""
    x, h0, *w = (t.clone().requires_grad_(True) for t in c.args)
    cell = nn.GRUCell(x.shape[2], h0.shape[1], dtype=x.dtype)
    for name, value in zip(NAMES, w):
        delattr(cell, name)
        setattr(cell, name, value)  # the module computes with our leaf tensors
    k, h, outs = c.kwargs["k"], h0, []
    for t in range(x.shape[1]):
        if t > 0 and t % k == 0:
            h = h.detach()
        h = cell(x[:, t], h)
        outs.append(h)
    out = torch.stack(outs, dim=1)
    return list(torch.autograd.grad(out, [x, h0, *w], c.data["grad_out"]))


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def torch_outputs(c):
    x, h0, *w = c.args
    gru = nn.GRU(x.shape[2], h0.shape[1], batch_first=True, dtype=x.dtype)
    with torch.no_grad():
        for name, value in zip(NAMES, w):
            getattr(gru, name + "_l0").copy_(value)
    return gru(x, h0[None])[0].detach()


def tbptt_grads(sol, c):
    _, grads = sol.vjp("gru_tbptt", c.args, c.data["grad_out"], c.kwargs)
    return grads


def cut_blocks_gradient(sol, c):
    """The output of step t has no gradient towards inputs before its window's start."""
    x = c.args[0]
    k, steps = c.kwargs["k"], x.shape[1]
    t = steps - 1
    start = (t // k) * k
    only_t = torch.zeros_like(c.data["grad_out"])
    only_t[:, t] = c.data["grad_out"][:, t]
    _, grads = sol.vjp("gru_tbptt", c.args, only_t, c.kwargs)
    gx = grads[0]
    if gx is None:
        fail("no gradient reached x at all")
    gx = shaped(gx, x.shape, "the gradient of x")
    if start > 0 and bool(gx[:, :start].abs().max() > 0):
        fail(f"step {t}'s output sends gradient to x before step {start}, where it was cut")
    if not bool(gx[:, start : t + 1].abs().sum() > 0):
        fail(f"no gradient reaches x in steps {start}..{t}, inside step {t}'s window")


def values_ignore_k(sol, c):
    x, h0, *w = c.args
    full = sol.call("gru_tbptt", x, h0, *w, k=x.shape[1])
    expect_close(sol.call("gru_tbptt", *c.args, **c.kwargs), full,
                 "outputs with cuts against outputs without")  # fmt: skip


def timing_case(d):
    """Batch 4, 16 steps, 16 inputs, 32 hidden units, cut every 4 steps, for the
    performance test."""
    return case(d.tensor((4, 16, 16), low=-2, high=2), d.tensor((4, 32), low=-1, high=1),
                *weights(d, 16, 32), 4)


DECLARATIONS = [
    values("one step equals nn.GRUCell", "gru_cell", one_step, expect=torch_cell, visible=True,
           description="weights injected into nn.GRUCell"),
    values("outputs equal nn.GRU", "gru_tbptt", sequence, expect=torch_outputs, visible=True,
           description="cutting the graph never changes the forward values"),
    values("gradients with cuts equal autograd cut at the same steps", tbptt_grads, sequence,
           expect=torch_tbptt_grads, visible=True, cases=1,
           description="gradients of x, h0 and the weights for a drawn grad_output"),
    values("more cut gradients", tbptt_grads, lambda d: sequence(d, low=3),
           expect=torch_tbptt_grads, cases=5),
    values("k = 2 on longer sequences", tbptt_grads, lambda d: sequence(d, k=2, low=4),
           expect=torch_tbptt_grads, cases=2),
    values("float64 gradients against the reference", tbptt_grads,
           lambda d: sequence(d, low=3), dtypes=("float64",)),
    edge("k = 1 cuts before every step", tbptt_grads, lambda d: sequence(d, k=1, low=2),
         expect=torch_tbptt_grads, cases=2),
    edge("k beyond the sequence is full backpropagation", tbptt_grads,
         lambda d: sequence(d, k=50), expect=torch_tbptt_grads, cases=2),
    shapes("output shape and dtype", "gru_tbptt", sequence, dtypes=("float32", "float64")),
    gradients("gradients through one step", "gru_cell", one_step),
    prop("a cut stops the gradient at its window's start", cut_blocks_gradient,
         lambda d: sequence(d, low=4), cases=4),
    prop("cuts never change the outputs", values_ignore_k, lambda d: sequence(d, low=2)),
    nontrivial("the gradients are not zero", tbptt_grads, lambda d: sequence(d, low=3)),
    performance("time against the reference", "gru_tbptt", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes the recurrence itself", visible=True,
             description="no nn.GRU, nn.GRUCell or torch.gru"),
]
