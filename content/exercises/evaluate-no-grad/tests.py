import math

import torch
import torch.nn.functional as F

from sandbox.grading import case, edge, expect_close, fail, nontrivial, performance, prop, values

F64 = torch.float64
NAMES = ("model", "linear", "batchnorm", "relu", "dropout", "head")


def network(d):
    """Weights and statistics of Linear(+spectral norm) - BatchNorm1d - ReLU - Dropout -
    Linear, all float64, with running statistics far from any batch's, so that batch
    statistics and running ones give different outputs."""
    dims = d.size(2, 7), d.size(3, 9), d.size(2, 5)  # D, H, C
    d_in, hidden, classes = dims
    w1 = d.weights(d_in, hidden).to(F64)
    u, _, vh = torch.linalg.svd(w1)
    state = {
        "0.bias": d.tensor((hidden,), low=-0.5, high=0.5, dtype=F64),
        "0.weight_orig": w1,
        # The first singular vectors, as power iteration would have left them: sigma > 0.
        "0.weight_u": u[:, 0].contiguous(),
        "0.weight_v": vh[0].contiguous(),
        "1.weight": d.tensor((hidden,), low=0.5, high=1.5, dtype=F64),
        "1.bias": d.tensor((hidden,), low=-0.5, high=0.5, dtype=F64),
        "1.running_mean": d.tensor((hidden,), low=-0.3, high=0.3, dtype=F64),
        "1.running_var": d.tensor((hidden,), low=0.02, high=0.2, dtype=F64),
        "1.num_batches_tracked": torch.tensor(d.integer(1, 500)),
        "4.weight": d.weights(hidden, classes).to(F64),
        "4.bias": d.tensor((classes,), low=-0.5, high=0.5, dtype=F64),
    }
    return state, dims


def draw_batches(d, dims, sizes):
    d_in, _, classes = dims
    return [
        (d.tensor((b, d_in), normal=True, dtype=F64), d.integers((b,), 0, classes)) for b in sizes
    ]


MODES = {
    "train": (True, True, True, True, True, True),
    "eval": (False, False, False, False, False, False),
    # Fine-tuning with a frozen batch norm: the model trains, one layer stays in eval mode.
    "frozen batchnorm": (True, True, False, True, True, True),
}


def setup(d, *, sizes=None, mode=None):
    state, dims = network(d)
    if sizes is None:
        sizes = [d.size(2, 9) for _ in range(d.size(1, 4))]
    mode = mode or d.choice(sorted(MODES))
    return case(
        data={
            "state": state,
            "dims": dims,
            "p": d.choice([0.3, 0.5]),
            "batches": draw_batches(d, dims, sizes),
            "modes": MODES[mode],
        }
    )


def build(sol, c):
    """The model, built in the solution's process, weights injected, modes set."""
    d_in, hidden, classes = c.data["dims"]
    linear = sol.new("torch.nn.utils.spectral_norm", sol.new("torch.nn.Linear", d_in, hidden))
    parts = [
        linear,
        sol.new("torch.nn.BatchNorm1d", hidden),
        sol.new("torch.nn.ReLU"),
        sol.new("torch.nn.Dropout", c.data["p"]),
        sol.new("torch.nn.Linear", hidden, classes),
    ]
    model = sol.new("torch.nn.Sequential", *parts)
    sol.method_ref(model, "double")
    sol.method(model, "load_state_dict", c.data["state"])
    for obj, training in zip([model, *parts], c.data["modes"], strict=True):
        sol.set(obj, "training", training)
    return model, parts


def run(sol, c):
    model, _ = build(sol, c)
    return list(sol.call("evaluate", model, c.data["batches"]))


def trusted(c):
    """In the grader, in float64: the eval-mode forward written out layer by layer."""
    s = c.data["state"]
    sigma = s["0.weight_u"] @ s["0.weight_orig"] @ s["0.weight_v"]
    losses, correct, count = [], 0, 0
    for x, y in c.data["batches"]:
        h = x @ (s["0.weight_orig"] / sigma).T + s["0.bias"]
        h = (h - s["1.running_mean"]) / torch.sqrt(s["1.running_var"] + 1e-5)
        h = torch.relu(h * s["1.weight"] + s["1.bias"])
        logits = h @ s["4.weight"].T + s["4.bias"]
        losses.append(F.cross_entropy(logits, y, reduction="none"))
        correct += int((logits.argmax(dim=1) == y).sum())
        count += y.shape[0]
    if count == 0:
        return [math.nan, math.nan]
    return [float(torch.cat(losses).mean()), correct / count]


def modes_restored(sol, c):
    model, parts = build(sol, c)
    sol.call("evaluate", model, c.data["batches"])
    for name, obj, want in zip(NAMES, [model, *parts], c.data["modes"], strict=True):
        got = sol.get(obj, "training")
        if got is not want:
            fail(f"after evaluate, the {name}'s training flag is {got}, it was {want}")


def modes_restored_after_an_error(sol, c):
    """A batch of the wrong width makes the forward raise half-way; the flags must still be
    restored (the error itself is the caller's to handle)."""
    model, parts = build(sol, c)
    d_in = c.data["dims"][0]
    good = c.data["batches"][0]
    bad = (torch.zeros((2, d_in + 1), dtype=F64), torch.zeros(2, dtype=torch.int64))
    try:
        sol.call("evaluate", model, [good, bad])
    except Exception:  # expected: the learner's forward raises on `bad`
        pass
    else:
        fail("evaluate should let the error of a failing forward propagate")
    for name, obj, want in zip(NAMES, [model, *parts], c.data["modes"], strict=True):
        got = sol.get(obj, "training")
        if got is not want:
            fail(f"after a forward raised, the {name}'s training flag is {got}, it was {want}")


def state_unchanged(sol, c):
    model, _ = build(sol, c)
    sol.call("evaluate", model, c.data["batches"])
    after = sol.method(model, "state_dict")
    for key, before in c.data["state"].items():
        if not torch.equal(after[key], before.to(after[key].dtype)):
            fail(
                f"evaluate changed {key} (running statistics and spectral-norm vectors are "
                "updated only by training forwards)"
            )


def no_graph(sol, c):
    """Spectral norm recomputes its weight at every forward, in the grad mode of that
    forward: after a forward outside no_grad / inference_mode it is part of a graph."""
    model, parts = build(sol, c)
    sol.call("evaluate", model, c.data["batches"])
    weight = sol.method_ref(parts[0], "__getattribute__", "weight")
    if sol.get(weight, "requires_grad"):
        fail(
            "the forward passes recorded a graph: run them under torch.inference_mode() "
            "or torch.no_grad()"
        )


def grads_untouched(sol, c):
    """Gradients accumulated before an evaluation are still there after it."""
    model, parts = build(sol, c)
    head = sol.method_ref(parts[4], "__getattr__", "weight")
    first = sol.method_ref(parts[0], "__getattr__", "weight_orig")
    sol.set(head, "grad", c.data["grad"])
    sol.call("evaluate", model, c.data["batches"])
    expect_close(sol.get(head, "grad"), c.data["grad"], "the head's weight.grad after evaluate")
    if sol.get(first, "grad") is not None:
        fail("a parameter without a gradient has one after evaluate")


def with_grad(d):
    c = setup(d)
    _, hidden, classes = c.data["dims"]
    c.data["grad"] = d.tensor((classes, hidden), normal=True, dtype=F64)
    return c


def twice_the_same(sol, c):
    model, _ = build(sol, c)
    first = sol.call("evaluate", model, c.data["batches"])
    second = sol.call("evaluate", model, c.data["batches"])
    expect_close(list(second), list(first), "a second evaluation of the same model and data")


def timing_setup(sol, c):
    """Outside the clock: the model in the solution's process, and evaluate bound to it."""
    model, _ = build(sol, c)
    return sol.new("evaluate.__get__", model)


def timing_case(d):
    """A 32-64-10 model and four batches of 16, for the performance test."""
    g = torch.Generator().manual_seed(0)
    dims = 32, 64, 10
    w1 = torch.randn(64, 32, generator=g, dtype=F64) / 32**0.5
    u, _, vh = torch.linalg.svd(w1)
    state = {
        "0.bias": torch.zeros(64, dtype=F64),
        "0.weight_orig": w1,
        "0.weight_u": u[:, 0].contiguous(),
        "0.weight_v": vh[0].contiguous(),
        "1.weight": torch.ones(64, dtype=F64),
        "1.bias": torch.zeros(64, dtype=F64),
        "1.running_mean": torch.zeros(64, dtype=F64),
        "1.running_var": torch.ones(64, dtype=F64),
        "1.num_batches_tracked": torch.tensor(9),
        "4.weight": torch.randn(10, 64, generator=g, dtype=F64) / 8,
        "4.bias": torch.zeros(10, dtype=F64),
    }
    batches = [
        (torch.randn(16, 32, generator=g, dtype=F64), torch.randint(0, 10, (16,), generator=g))
        for _ in range(4)
    ]
    return case(
        batches,
        data={"state": state, "dims": dims, "p": 0.5, "batches": batches, "modes": MODES["train"]},
    )


DECLARATIONS = [
    values(
        "loss and accuracy in eval mode",
        run,
        lambda d: setup(d, mode="train"),
        expect=trusted,
        visible=True,
        cases=3,
        description="a training-mode model with dropout and batch norm, several batches",
    ),
    values("batches of different sizes, any starting mode", run, setup, expect=trusted, cases=4),
    values("match the reference", run, setup, cases=3),
    prop(
        "every module's mode is restored",
        modes_restored,
        setup,
        cases=3,
        visible=True,
        description="train, eval, or a model in train mode with a frozen batch norm",
    ),
    prop(
        "modes are restored when a forward raises",
        modes_restored_after_an_error,
        lambda d: setup(d, mode="frozen batchnorm"),
        cases=2,
    ),
    prop(
        "a frozen layer stays frozen",
        modes_restored,
        lambda d: setup(d, mode="frozen batchnorm"),
        cases=2,
    ),
    prop("running statistics are not updated", state_unchanged, setup, cases=3),
    prop("no autograd graph is built", no_graph, setup, cases=2),
    prop("existing gradients are left alone", grads_untouched, with_grad, cases=2),
    prop("evaluating twice gives the same numbers", twice_the_same, setup, cases=2),
    edge("no batches at all", run, lambda d: setup(d, sizes=[]), expect=trusted, cases=1),
    edge(
        "batches of one example",
        run,
        lambda d: setup(d, sizes=[1, 1, 1], mode="train"),
        expect=trusted,
        cases=2,
    ),
    edge("a single example in total", run, lambda d: setup(d, sizes=[1]), expect=trusted, cases=2),
    edge(
        "an empty batch among others",
        run,
        lambda d: setup(d, sizes=[d.size(2, 6), 0, d.size(2, 6)]),
        expect=trusted,
        cases=2,
    ),
    nontrivial("the loss is not zero", run, setup),
    performance(
        "time against the reference",
        "__call__",
        timing_case,
        setup=timing_setup,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
]
