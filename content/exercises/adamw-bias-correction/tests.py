import torch

from sandbox.grading import api_rule, case, edge, fail, nontrivial, performance, prop, shapes
from sandbox.grading import sequence, trajectory


def problem(d, *, steps=5, grad_scale=1.0, hyper=None):
    """Two or three parameters of drawn shapes, the gradients of every step, and the
    optimiser's settings: everything injected, nothing left to creation order."""
    shapes_ = [d.shape(2, high=9), (d.size(1, 12),)] + ([d.shape(3, high=4)] if d.case else [])
    weights = [d.tensor(s, normal=True) for s in shapes_]
    grads = [[d.tensor(s, normal=True) * grad_scale for s in shapes_] for _ in range(steps)]
    settings = hyper if hyper is not None else {}
    return case(data={"weights": weights, "grads": grads, "settings": settings})


def drawn_settings(d):
    return problem(d, hyper={
        "lr": d.choice([1e-3, 3e-3, 1e-2, 5e-2]),
        "betas": (d.choice([0.8, 0.9, 0.95]), d.choice([0.99, 0.999, 0.9999])),
        "eps": d.choice([1e-8, 1e-6]),
        "weight_decay": d.choice([0.0, 0.01, 0.1, 0.3]),
    })


def run(sol, c, grads_for=None):
    """Inject the weights, feed each step's gradients, return the weights after each step.
    `grads_for(step, i)` says whether parameter i gets a gradient at that step."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    opt = sol.new("AdamW", params, **c.data["settings"])
    trajectory_ = []
    for step, grads in enumerate(c.data["grads"]):
        for i, g in enumerate(grads):
            if grads_for is None or grads_for(step, i):
                sol.set(sol.index(params, i), "grad", g)
        sol.method(opt, "step")
        sol.method(opt, "zero_grad")
        trajectory_.append(sol.get(params))
    return trajectory_


def torch_adamw(c, grads_for=None):
    """The same trajectory with torch.optim.AdamW, in the grader's process."""
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    opt = torch.optim.AdamW(params, **c.data["settings"])
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
    return torch_adamw(c, late)


def movement(sol, c):
    """How far each parameter moved in total: a solution that never updates moves nothing."""
    last = run(sol, c)[-1]
    return [p - w for p, w in zip(last, c.data["weights"])]


def zero_grad_clears(sol, c):
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    opt = sol.new("AdamW", params)
    for i, g in enumerate(c.data["grads"][0]):
        sol.set(sol.index(params, i), "grad", g)
    sol.method(opt, "zero_grad")
    for i in range(len(c.data["weights"])):
        if sol.get(sol.index(params, i), "grad") is not None:
            fail(f"after zero_grad, parameter {i}'s .grad is not None")


def optimiser(sol, c):
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    return params, sol.new("AdamW", params, **c.data["settings"])


def stepped(skip=None):
    """A move: set the k-th gradients (all but parameter `skip(k)`'s), step; the weights."""

    def move(sol, built, c, k):
        params, opt = built
        grads = c.data["grads"][k % len(c.data["grads"])]
        for i, g in enumerate(grads):
            if skip is None or i != skip(k, len(grads)):
                sol.set(sol.index(params, i), "grad", g)
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
    "step without one gradient": stepped(lambda k, n: k % n),
    "zero_grad": cleared,
}


# The performance test's parameters: a weight, its bias and a second weight.
TIMED_SHAPES = [(128, 128), (128,), (32, 128)]


def timed_steps(d):
    """A timed call is one step, without arguments. The case carries only the seed that the
    setup draws its parameters from: drawing them for every call would cost more than the
    steps do."""
    return case(data={"seed": d.integer(0, 2**62)})


def ready_to_step(sol, c):
    """The performance test's setup, outside the clock: parameters kept in the solution's
    process with their gradients set, and an AdamW over them."""
    g = torch.Generator().manual_seed(c.data["seed"])
    params = sol.keep([torch.randn(s, generator=g).requires_grad_(True) for s in TIMED_SHAPES])
    for i, s in enumerate(TIMED_SHAPES):
        sol.set(sol.index(params, i), "grad", torch.randn(s, generator=g))
    return sol.new("AdamW", params, lr=1e-3, weight_decay=0.01)


DECLARATIONS = [
    trajectory("five steps match torch.optim.AdamW", run, problem, expect=torch_adamw,
               visible=True, description="default settings, injected weights and gradients"),
    trajectory("drawn settings match torch.optim.AdamW", run, drawn_settings, expect=torch_adamw,
               cases=4),
    trajectory("drawn settings match the reference", run, drawn_settings, cases=2),
    trajectory("strong weight decay", run,
               lambda d: problem(d, hyper={"lr": 0.05, "weight_decay": 0.5}), expect=torch_adamw),
    edge("tiny gradients", run, lambda d: problem(d, grad_scale=1e-5), expect=torch_adamw,
         cases=2, description="gradients near eps: where eps is added matters"),
    edge("zero gradients still decay the weights", run,
         lambda d: problem(d, grad_scale=0.0, hyper={"lr": 0.1, "weight_decay": 0.2}),
         expect=torch_adamw, cases=1),
    edge("a parameter whose gradient arrives late", run_late, problem, expect=torch_late,
         cases=2, description="its bias correction starts at its own first step"),
    sequence("steps and zero_grad in a drawn order", optimiser, MOVES, drawn_settings,
             length=6),
    shapes("parameters keep shape and dtype", run, lambda d: problem(d, steps=2),
           dtypes=("float32", "float64"), cases=2),
    nontrivial("the weights move", movement, problem),
    prop("zero_grad sets the gradients to None", zero_grad_clears, problem, cases=1,
         visible=True),
    performance("time against the reference", "step", timed_steps, setup=ready_to_step,
                description="one step over 20,608 parameters in three tensors, gradients set; "
                "reported with its spread, not graded in this exercise"),
    api_rule("does not use torch.optim", visible=True),
]
