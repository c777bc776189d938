import torch

from sandbox.grading import api_rule, case, edge, expect_close, fail, nontrivial, prop, shapes
from sandbox.grading import performance, sequence, trajectory, values


def problem(d, *, steps=3, spatial=None, batch=None, hyper=None, spread=1.0):
    """A layer's injected state and a few batches: weight, bias and running statistics drawn,
    so nothing depends on how the layer initialises itself. `spread` scales the batches."""
    c = d.size(1, 7)
    n = batch if batch is not None else d.size(2, 6)
    h, w = spatial if spatial is not None else (d.size(1, 5), d.size(1, 6))
    settings = hyper if hyper is not None else {}
    state = {
        "weight": d.tensor((c,), low=0.5, high=2.0),
        "bias": d.tensor((c,), low=-1.0, high=1.0),
        "running_mean": d.tensor((c,), low=-1.0, high=1.0),
        "running_var": d.tensor((c,), low=0.5, high=2.0),
    }
    shift = d.tensor((1, c, 1, 1), low=-3.0, high=3.0)
    batches = [(d.tensor((n, c, h, w), normal=True) * 2.0 + shift) * spread for _ in range(steps)]
    return case(data={"channels": c, "state": state, "batches": batches, "settings": settings})


def drawn_momentum(d):
    return problem(d, hyper={"momentum": d.choice([0.01, 0.1, 0.3, 0.9]),
                             "eps": d.choice([1e-5, 1e-3])})


def build(sol, c):
    bn = sol.new("BatchNorm2d", c.data["channels"], **c.data["settings"])
    for name, value in c.data["state"].items():
        sol.set(bn, name, value)
    return bn


def run_train(sol, c):
    """Each training step: the output and both running statistics."""
    bn = build(sol, c)
    out = []
    for x in c.data["batches"]:
        y = sol.method(bn, "forward", x)
        out.append([y, sol.get(bn, "running_mean"), sol.get(bn, "running_var")])
    return out


def run_train_then_eval(sol, c):
    """Two training steps, then eval on the last batch: eval reads the updated statistics."""
    bn = build(sol, c)
    out = []
    for x in c.data["batches"][:-1]:
        out.append(sol.method(bn, "forward", x))
    sol.set(bn, "training", False)
    out.append(sol.method(bn, "forward", c.data["batches"][-1]))
    out.append([sol.get(bn, "running_mean"), sol.get(bn, "running_var")])
    return out


def torch_layer(c):
    bn = torch.nn.BatchNorm2d(c.data["channels"], **c.data["settings"])
    with torch.no_grad():
        for name, value in c.data["state"].items():
            getattr(bn, name).copy_(value)
    return bn


def torch_train(c):
    bn = torch_layer(c)
    out = []
    with torch.no_grad():
        for x in c.data["batches"]:
            y = bn(x)
            out.append([y, bn.running_mean.clone(), bn.running_var.clone()])
    return out


def torch_train_then_eval(c):
    bn = torch_layer(c)
    out = []
    with torch.no_grad():
        for x in c.data["batches"][:-1]:
            out.append(bn(x))
        bn.eval()
        out.append(bn(c.data["batches"][-1]))
    out.append([bn.running_mean.clone(), bn.running_var.clone()])
    return out


def fresh_run(sol, c):
    """A layer as constructed, nothing injected: its four tensors, then two training steps
    (output and running statistics) and eval on the last batch."""
    bn = sol.new("BatchNorm2d", c.data["channels"])
    out = [[sol.get(bn, name) for name in ("weight", "bias", "running_mean", "running_var")]]
    for x in c.data["batches"][:-1]:
        y = sol.method(bn, "forward", x)
        out.append([y, sol.get(bn, "running_mean"), sol.get(bn, "running_var")])
    sol.set(bn, "training", False)
    out.append(sol.method(bn, "forward", c.data["batches"][-1]))
    return out


def torch_fresh_run(c):
    bn = torch.nn.BatchNorm2d(c.data["channels"])
    out = [[bn.weight.detach().clone(), bn.bias.detach().clone(), bn.running_mean.clone(),
            bn.running_var.clone()]]
    with torch.no_grad():
        for x in c.data["batches"][:-1]:
            y = bn(x)
            out.append([y, bn.running_mean.clone(), bn.running_var.clone()])
        bn.eval()
        out.append(bn(c.data["batches"][-1]))
    return out


def eval_only(sol, c):
    bn = build(sol, c)
    sol.set(bn, "training", False)
    return sol.method(bn, "forward", c.data["batches"][0])


def torch_eval_only(c):
    bn = torch_layer(c)
    bn.eval()
    with torch.no_grad():
        return bn(c.data["batches"][0])


def eval_leaves_statistics_alone(sol, c):
    bn = build(sol, c)
    sol.set(bn, "training", False)
    for x in c.data["batches"]:
        sol.method(bn, "forward", x)
    for name in ("running_mean", "running_var"):
        expect_close(sol.get(bn, name), c.data["state"][name], f"{name} after eval forwards")


def eval_is_per_sample(sol, c):
    """In eval mode a sample's output does not depend on the rest of its batch."""
    bn = build(sol, c)
    sol.set(bn, "training", False)
    x = c.data["batches"][0]
    whole = sol.method(bn, "forward", x)
    alone = sol.method(bn, "forward", x[:1])
    expect_close(alone, whole[:1], "the first sample alone against within its batch")


def train_output_is_standardised(sol, c):
    """With weight 1 and bias 0, each channel of a training output has mean 0 and biased
    variance v / (v + eps), v the channel's biased variance in the batch."""
    bn = build(sol, c)
    c_ = c.data["channels"]
    sol.set(bn, "weight", torch.ones(c_))
    sol.set(bn, "bias", torch.zeros(c_))
    y = sol.method(bn, "forward", c.data["batches"][0])
    if y.shape != c.data["batches"][0].shape:
        fail(f"output shape {tuple(y.shape)}, input {tuple(c.data['batches'][0].shape)}")
    dims = (0, 2, 3)
    expect_close(y.mean(dim=dims), torch.zeros(c_), "per-channel mean of the output", scale=10)
    # Exactly v / (v + eps) for a channel of biased variance v: below 1 for tiny variances.
    v = c.data["batches"][0].double().var(dim=dims, unbiased=False)
    eps = c.data["settings"].get("eps", 1e-5)
    var = y.double().var(dim=dims, unbiased=False)
    expect_close(var, v / (v + eps), "per-channel biased variance of the output", scale=100)


def running_var_only(sol, c):
    bn = build(sol, c)
    sol.method(bn, "forward", c.data["batches"][0])
    return sol.get(bn, "running_var")


def torch_running_var_only(c):
    bn = torch_layer(c)
    with torch.no_grad():
        bn(c.data["batches"][0])
    return bn.running_var.clone()


def forward_in(training):
    """A move: set `training`, forward the k-th batch; the output and both running
    statistics."""

    def move(sol, bn, c, k):
        sol.set(bn, "training", training)
        y = sol.method(bn, "forward", c.data["batches"][k % len(c.data["batches"])])
        return [y, sol.get(bn, "running_mean"), sol.get(bn, "running_var")]

    return move


MOVES = {"forward in training mode": forward_in(True), "forward in eval mode": forward_in(False)}


def first_output(sol, c):
    return run_train(sol, c)[0][0]


def timed_batch(d):
    """A training batch of 4 images of 16 channels, 8x8, and the layer's injected state."""
    c = 16
    state = {
        "weight": d.tensor((c,), low=0.5, high=2.0),
        "bias": d.tensor((c,), low=-1.0, high=1.0),
        "running_mean": d.tensor((c,), low=-1.0, high=1.0),
        "running_var": d.tensor((c,), low=0.5, high=2.0),
    }
    return case(d.tensor((4, c, 8, 8), normal=True), data={"channels": c, "state": state,
                                                            "settings": {}})  # fmt: skip


DECLARATIONS = [
    trajectory("three training steps match nn.BatchNorm2d", run_train, problem,
               expect=torch_train, visible=True,
               description="outputs and running statistics after each step, state injected"),
    trajectory("drawn momentum and eps match nn.BatchNorm2d", run_train, drawn_momentum,
               expect=torch_train, cases=3),
    trajectory("training then eval matches nn.BatchNorm2d", run_train_then_eval, drawn_momentum,
               expect=torch_train_then_eval, cases=3),
    sequence("training and eval forwards in a drawn order", build, MOVES,
             lambda d: problem(d, steps=8), length=8,
             description="the mode switched before each forward, back and forth"),
    values("eval mode uses the running statistics", eval_only, problem,
           expect=torch_eval_only, visible=True, cases=2),
    values("a freshly built layer matches nn.BatchNorm2d", fresh_run, problem,
           expect=torch_fresh_run, cases=2,
           description="nothing injected: the constructor's tensors and defaults are used"),
    edge("nearly constant channels, default eps", run_train,
         lambda d: problem(d, spread=1e-3), expect=torch_train, cases=2,
         description="batch variances far below 1"),
    edge("running variance from two values per channel", running_var_only,
         lambda d: problem(d, steps=1, spatial=(1, 1), batch=2), expect=torch_running_var_only,
         cases=2, description="m = 2: biased and unbiased variance differ by a factor of 2"),
    edge("1x1 feature maps", run_train, lambda d: problem(d, spatial=(1, 1), batch=d.size(2, 9)),
         expect=torch_train, cases=2),
    edge("a batch of one image", run_train,
         lambda d: problem(d, batch=1, spatial=(d.size(2, 5), d.size(2, 5))), expect=torch_train,
         cases=2),
    shapes("output keeps shape and dtype", first_output, problem,
           dtypes=("float32", "float64"), cases=2),
    prop("eval mode changes no statistics", eval_leaves_statistics_alone, problem, cases=2),
    prop("eval mode treats each sample on its own", eval_is_per_sample,
         lambda d: problem(d, batch=d.size(2, 6)), cases=2),
    prop("training output is standardised per channel", train_output_is_standardised, problem,
         cases=2),
    nontrivial("the output is not zero", first_output, problem),
    performance("time against the reference", "forward", timed_batch, setup=build,
                description="a training-mode forward of 4 images of 16 channels, 8x8, the "
                "running statistics updated; reported with its spread, not graded in this "
                "exercise"),
    api_rule("normalises by hand", visible=True,
             description="no F.batch_norm, nn.BatchNorm2d or their relatives"),
]
