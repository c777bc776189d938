import torch

from sandbox.grading import api_rule, case, edge, fail, nontrivial, performance, prop, shapes
from sandbox.grading import sequence, trajectory


def problem(d, *, steps=5, hyper=None):
    """Two or three parameters of drawn shapes, every step's gradients, and the settings:
    everything injected, nothing left to creation order."""
    shapes_ = [d.shape(2, high=9), (d.size(1, 12),)] + ([d.shape(3, high=4)] if d.case else [])
    weights = [d.tensor(s, normal=True) for s in shapes_]
    grads = [[d.tensor(s, normal=True) for s in shapes_] for _ in range(steps)]
    settings = hyper if hyper is not None else {"lr": 0.1, "momentum": 0.9}
    return case(data={"weights": weights, "grads": grads, "settings": settings})


def nesterov(d):
    return problem(d, hyper={"lr": d.choice([0.01, 0.05, 0.1]),
                             "momentum": d.choice([0.5, 0.9, 0.99]), "nesterov": True,
                             "weight_decay": d.choice([0.0, 0.01, 0.1])})


def dampened(d):
    return problem(d, hyper={"lr": d.choice([0.01, 0.05, 0.1]),
                             "momentum": d.choice([0.5, 0.9]),
                             "dampening": d.choice([0.1, 0.5, 0.9]),
                             "weight_decay": d.choice([0.0, 0.05])})


def decayed(d):
    return problem(d, hyper={"lr": 0.05, "momentum": d.choice([0.0, 0.9]),
                             "weight_decay": d.choice([0.1, 0.5]),
                             "nesterov": False})


def no_momentum_dampened(d):
    return problem(d, hyper={"lr": d.choice([0.05, 0.1]), "momentum": 0.0,
                             "dampening": d.choice([0.3, 0.5, 0.9])})


def strong_decay(d):
    """Weight decay of 1 in the first case and 2 in the second."""
    return problem(d, hyper={"lr": 0.05, "momentum": d.choice([0.0, 0.9]),
                             "weight_decay": (1.0, 2.0)[d.case % 2]})


def default_lr(d):
    """No lr given: the signature's default applies."""
    return problem(d, hyper={"momentum": d.choice([0.0, 0.5, 0.9])})


def run(sol, c, grads_for=None):
    """Inject the weights, feed each step's gradients, return the weights after each step.
    `grads_for(step, i)` says whether parameter i gets a gradient at that step."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    opt = sol.new("SGD", params, **c.data["settings"])
    out = []
    for step, grads in enumerate(c.data["grads"]):
        for i, g in enumerate(grads):
            if grads_for is None or grads_for(step, i):
                sol.set(sol.index(params, i), "grad", g)
        sol.method(opt, "step")
        sol.method(opt, "zero_grad")
        out.append(sol.get(params))
    return out


def torch_sgd(c, grads_for=None):
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    opt = torch.optim.SGD(params, **c.data["settings"])
    out = []
    for step, grads in enumerate(c.data["grads"]):
        for i, (p, g) in enumerate(zip(params, grads)):
            if grads_for is None or grads_for(step, i):
                p.grad = g.clone()
        opt.step()
        opt.zero_grad(set_to_none=True)
        out.append([p.detach().clone() for p in params])
    return out


def late(step, i):
    """Parameter 0 gets no gradient for the first two steps."""
    return i != 0 or step >= 2


def run_late(sol, c):
    return run(sol, c, late)


def torch_late(c):
    return torch_sgd(c, late)


def run_same_grad(sol, c):
    """The gradients are set once and left in place for every step."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    opt = sol.new("SGD", params, **c.data["settings"])
    for i, g in enumerate(c.data["grads"][0]):
        sol.set(sol.index(params, i), "grad", g)
    out = []
    for _ in c.data["grads"]:
        sol.method(opt, "step")
        out.append(sol.get(params))
    return out


def torch_same_grad(c):
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    opt = torch.optim.SGD(params, **c.data["settings"])
    for p, g in zip(params, c.data["grads"][0]):
        p.grad = g.clone()
    out = []
    for _ in c.data["grads"]:
        opt.step()
        out.append([p.detach().clone() for p in params])
    return out


def run_reading_grads(sol, c):
    """Each step's weights and the gradients as the caller reads them after step(): step()
    must leave .grad as it was given (weight decay is added to a copy)."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    opt = sol.new("SGD", params, **c.data["settings"])
    out = []
    for grads in c.data["grads"]:
        for i, g in enumerate(grads):
            sol.set(sol.index(params, i), "grad", g)
        sol.method(opt, "step")
        out.append([sol.get(params), [sol.get(sol.index(params, i), "grad")
                                      for i in range(len(grads))]])  # fmt: skip
    return out


def torch_reading_grads(c):
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    opt = torch.optim.SGD(params, **c.data["settings"])
    out = []
    for grads in c.data["grads"]:
        for p, g in zip(params, grads):
            p.grad = g.clone()
        opt.step()
        out.append([[p.detach().clone() for p in params], [p.grad.clone() for p in params]])
    return out


def movement(sol, c):
    last = run(sol, c)[-1]
    return [p - w for p, w in zip(last, c.data["weights"])]


def zero_grad_clears(sol, c):
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    opt = sol.new("SGD", params, lr=0.1, momentum=0.9)
    for i, g in enumerate(c.data["grads"][0]):
        sol.set(sol.index(params, i), "grad", g)
    sol.method(opt, "zero_grad")
    for i in range(len(c.data["weights"])):
        if sol.get(sol.index(params, i), "grad") is not None:
            fail(f"after zero_grad, parameter {i}'s .grad is not None")


def momentum_settings(d):
    return d.choice([nesterov, dampened])(d)


def optimiser(sol, c):
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    return params, sol.new("SGD", params, **c.data["settings"])


def stepped(skip=None):
    """A move: set the k-th gradients (parameter `skip(k)`'s to None), step; the weights."""

    def move(sol, built, c, k):
        params, opt = built
        grads = c.data["grads"][k % len(c.data["grads"])]
        for i, g in enumerate(grads):
            missing = skip is not None and i == skip(k, len(grads))
            sol.set(sol.index(params, i), "grad", None if missing else g)
        sol.method(opt, "step")
        return sol.get(params)

    return move


def cleared(sol, built, c, k):
    """A move: zero_grad; every parameter's .grad after it."""
    params, opt = built
    sol.method(opt, "zero_grad")
    return [sol.get(sol.index(params, i), "grad") for i in range(len(c.data["weights"]))]


MOVES = {
    "step": stepped(),
    "step with one gradient None": stepped(lambda k, n: k % n),
    "zero_grad": cleared,
}


def nesterov_needs_momentum_without_dampening(sol, c):
    """Nesterov with no momentum, or with dampening, is refused when the optimiser is built."""
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    refused = [{"lr": 0.1, "momentum": 0.0, "nesterov": True},
               {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "nesterov": True}]
    answers = sol.batch([{"op": "new", "target": "SGD", "args": [params], "kwargs": kw}
                         for kw in refused])
    for kw, (ok, answer) in zip(refused, answers):
        if ok or not str(answer).startswith("ValueError"):
            fail(f"SGD(params, **{kw}) should raise ValueError, got "
                 f"{'an optimiser' if ok else answer}")


# The performance test's parameters: a weight, its bias and a second weight.
TIMED_SHAPES = [(128, 128), (128,), (32, 128)]


def timed_steps(d):
    """A timed call is one step, without arguments. The case carries only the seed that the
    setup draws its parameters from: drawing them for every call would cost more than the
    steps do."""
    return case(data={"seed": d.integer(0, 2**62)})


def ready_to_step(sol, c):
    """The performance test's setup, outside the clock: parameters kept in the solution's
    process with their gradients set, and a Nesterov SGD with weight decay over them."""
    g = torch.Generator().manual_seed(c.data["seed"])
    params = sol.keep([torch.randn(s, generator=g).requires_grad_(True) for s in TIMED_SHAPES])
    for i, s in enumerate(TIMED_SHAPES):
        sol.set(sol.index(params, i), "grad", torch.randn(s, generator=g))
    return sol.new("SGD", params, lr=0.01, momentum=0.9, weight_decay=0.01, nesterov=True)


DECLARATIONS = [
    trajectory("five momentum steps match torch.optim.SGD", run, problem, expect=torch_sgd,
               visible=True, description="lr 0.1, momentum 0.9, injected weights and gradients"),
    trajectory("Nesterov matches torch.optim.SGD", run, nesterov, expect=torch_sgd,
               visible=True, cases=3, description="nesterov=True, with and without weight decay"),
    trajectory("dampening matches torch.optim.SGD", run, dampened, expect=torch_sgd, cases=3),
    trajectory("weight decay matches torch.optim.SGD", run, decayed, expect=torch_sgd, cases=3),
    trajectory("step() leaves the gradients as given, weight decay on", run_reading_grads,
               decayed, expect=torch_reading_grads, cases=2),
    trajectory("Nesterov matches the reference", run, nesterov, cases=2),
    edge("plain SGD without momentum", run,
         lambda d: problem(d, hyper={"lr": d.choice([0.01, 0.3])}), expect=torch_sgd, cases=2),
    edge("a parameter whose gradient arrives late", run_late, dampened, expect=torch_late,
         cases=2, description="its buffer starts at its own first gradient"),
    edge("the same gradient tensor for every step", run_same_grad,
         lambda d: problem(d, hyper={"lr": 0.05, "momentum": 0.9}), expect=torch_same_grad,
         cases=2, description="the buffer must not share memory with .grad"),
    sequence("steps, skipped gradients and zero_grad in a drawn order", optimiser, MOVES,
             momentum_settings, length=6,
             description="steps, some with one .grad None (skipped, its buffer untouched), and "
             "zero_grad calls on one optimiser"),
    edge("dampening set while momentum is 0", run, no_momentum_dampened, expect=torch_sgd,
         cases=2),
    trajectory("weight decay of 1 and 2 matches torch.optim.SGD", run, strong_decay,
               expect=torch_sgd, cases=2),
    trajectory("lr left at its default", run, default_lr, cases=2,
               description="SGD(params, momentum=...) with no lr given"),
    prop("Nesterov without momentum or with dampening is refused",
         nesterov_needs_momentum_without_dampening, problem, cases=1),
    shapes("parameters keep shape and dtype", run, lambda d: problem(d, steps=2),
           dtypes=("float32", "float64"), cases=2),
    nontrivial("the weights move", movement, problem),
    prop("zero_grad sets the gradients to None", zero_grad_clears, problem, cases=1,
         visible=True),
    performance("time against the reference", "step", timed_steps, setup=ready_to_step,
                description="one Nesterov step with weight decay over 20,608 parameters in "
                "three tensors, gradients set; reported with its spread, not graded in this "
                "exercise"),
    api_rule("does not use torch.optim", visible=True),
]
