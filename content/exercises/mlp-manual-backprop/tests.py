import torch

from sandbox.grading import (
    api_rule,
    case,
    edge,
    expect_close,
    fail,
    nontrivial,
    performance,
    prop,
    shapes,
    trajectory,
    values,
)

NAMES = ("w1", "b1", "w2", "b2")


def answer(value, what, shape=None, count=None):
    """The learner's answer, checked before a property computes with it: a tensor (of
    `shape`, when given) or a sequence of `count` values; anything else fails the check."""
    if count is not None:
        if not isinstance(value, (tuple, list)) or len(value) != count:
            fail(f"{what}: expected {count} values, got {type(value).__name__}")
        return value
    if not isinstance(value, torch.Tensor):
        fail(f"{what}: expected a tensor, got {type(value).__name__}")
    if shape is not None and tuple(value.shape) != tuple(shape):
        fail(f"{what}: expected shape {tuple(shape)}, got {tuple(value.shape)}")
    return value


def network(d, n=None, dead=False, at_zero=False):
    """Injected parameters, a batch and its targets. `dead`: half the hidden units get a
    bias so negative that relu never lets them through. `at_zero`: half the hidden units
    get zero weights and a zero bias, so relu's input there is exactly 0 on every row."""
    n = n if n is not None else d.size(1, 24)
    dims, hidden, outs = d.size(1, 12), d.size(1, 20), d.size(1, 6)
    b1 = d.tensor((hidden,), low=-0.5, high=0.5)
    if dead:
        b1[: (hidden + 1) // 2] = -50.0
    w1 = d.weights(dims, hidden)
    if at_zero:
        w1[: (hidden + 1) // 2] = 0.0
        b1[: (hidden + 1) // 2] = 0.0
    params = {
        "w1": w1,
        "b1": b1,
        "w2": d.weights(hidden, outs),
        "b2": d.tensor((outs,), low=-0.5, high=0.5),
    }
    x = d.tensor((n, dims))
    y = d.tensor((n, outs), normal=True)
    return case(params, x, y, data={"lr": d.choice([0.05, 0.1, 0.3]), "steps": 5})


def torch_net(params):
    """nn.Linear layers holding the injected weights: nothing depends on creation order."""
    hidden, dims = params["w1"].shape
    outs = params["w2"].shape[0]
    # Built in the weights' dtype: copying float64 weights into float32 layers would round them.
    dtype = params["w1"].dtype
    first = torch.nn.Linear(dims, hidden, dtype=dtype)
    second = torch.nn.Linear(hidden, outs, dtype=dtype)
    with torch.no_grad():
        first.weight.copy_(params["w1"])
        first.bias.copy_(params["b1"])
        second.weight.copy_(params["w2"])
        second.bias.copy_(params["b2"])
    net = torch.nn.Sequential(first, torch.nn.ReLU(), second)
    return net, {"w1": first.weight, "b1": first.bias, "w2": second.weight, "b2": second.bias}


def torch_forward(c):
    params, x, _ = c.args
    net, _ = torch_net(params)
    with torch.no_grad():
        return net(x)


def torch_loss_and_grads(c):
    params, x, y = c.args
    net, named = torch_net(params)
    loss = torch.nn.functional.mse_loss(net(x), y)
    grads = torch.autograd.grad(loss, [named[k] for k in NAMES])
    return loss.detach(), dict(zip(NAMES, grads, strict=True))


def train(sol, c):
    """k steps of loss_and_grads then sgd_step; the loss and parameters after each."""
    params, x, y = c.args
    out = []
    for _ in range(c.data["steps"]):
        loss, grads = answer(sol.call("loss_and_grads", params, x, y), "loss_and_grads",
                             count=2)
        params = sol.call("sgd_step", params, grads, c.data["lr"])
        if not isinstance(params, dict):
            fail(f"sgd_step returned a {type(params).__name__}, not a dict of parameters")
        out.append({"loss": loss, **params})
    return out


def torch_train(c):
    params, x, y = c.args
    net, named = torch_net(params)
    opt = torch.optim.SGD(net.parameters(), lr=c.data["lr"])
    out = []
    for _ in range(c.data["steps"]):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        out.append({"loss": loss.detach().clone(),
                    **{k: named[k].detach().clone() for k in NAMES}})
    return out


def step_leaves_inputs(sol, c):
    params, x, y = c.args
    kept = sol.keep(params)
    _, grads = answer(sol.call("loss_and_grads", params, x, y), "loss_and_grads", count=2)
    sol.call("sgd_step", kept, grads, 0.5)
    after = sol.get(kept)
    if not isinstance(after, dict):
        fail("sgd_step replaced the parameters' dict it was given")
    for k in NAMES:
        expect_close(after.get(k), params[k], f"params[{k!r}] after sgd_step")


def loss_goes_down(sol, c):
    params, x, y = c.args
    first, grads = answer(sol.call("loss_and_grads", params, x, y), "loss_and_grads", count=2)
    stepped = sol.call("sgd_step", params, grads, 1e-3)
    second, _ = answer(sol.call("loss_and_grads", stepped, x, y), "loss_and_grads", count=2)
    first, second = answer(first, "loss", ()), answer(second, "loss", ())
    if not float(second) < float(first):
        fail(
            f"a small step along the gradients did not lower the loss ({float(first):.6g} "
            f"became {float(second):.6g})"
        )


def forward_of(sol, c):
    params, x, _ = c.args
    return sol.call("forward", params, x)


def grads_of(sol, c):
    return answer(sol.call("loss_and_grads", *c.args), "loss_and_grads", count=2)[1]


def timing_case(d):
    """A 32-64-10 network on 64 rows, for the performance test."""
    params = {"w1": d.weights(32, 64), "b1": d.tensor((64,), low=-0.5, high=0.5),
              "w2": d.weights(64, 10), "b2": d.tensor((10,), low=-0.5, high=0.5)}
    return case(params, d.tensor((64, 32)), d.tensor((64, 10), normal=True))


DECLARATIONS = [
    values("forward matches nn.Linear, ReLU, nn.Linear", forward_of, network, visible=True,
           expect=torch_forward, description="the injected weights in torch's own layers"),
    values("loss and gradients match autograd", "loss_and_grads", network, visible=True,
           expect=torch_loss_and_grads, cases=3),
    values("loss and gradients in float64", "loss_and_grads", network, dtypes=("float64",),
           expect=torch_loss_and_grads, cases=2),
    shapes("gradients are shaped like the parameters", "loss_and_grads", network),
    trajectory("five steps match torch.optim.SGD", train, network, expect=torch_train,
               visible=True, description="loss and parameters after each step"),
    trajectory("drawn batches and rates match torch.optim.SGD", train, network,
               expect=torch_train, cases=2),
    edge("a batch of one", "loss_and_grads", lambda d: network(d, n=1),
         expect=torch_loss_and_grads, cases=2),
    edge("dead hidden units get no gradient", "loss_and_grads",
         lambda d: network(d, dead=True), expect=torch_loss_and_grads, cases=2),
    edge("hidden units whose input is exactly zero", "loss_and_grads",
         lambda d: network(d, at_zero=True), expect=torch_loss_and_grads, cases=2,
         dtypes=("float32", "float64")),
    prop("sgd_step leaves its inputs unchanged", step_leaves_inputs, network, cases=2),
    prop("a small step lowers the loss", loss_goes_down, network, cases=2),
    nontrivial("the gradients are not zero", grads_of, network),
    performance("time against the reference", "loss_and_grads", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("no autograd and no torch.optim", visible=True,
             description="no .backward(), torch.autograd, torch.func, torch.optim or F.mse_loss"),
]
