import torch

from sandbox.grading import api_rule, case, edge, fail, nontrivial, performance, prop, shapes
from sandbox.grading import trajectory


def problem(d, *, steps=6, bad=None, interval=None, bad_value=None):
    """Weights, the true gradients of each step (scaled by the scaler's current scale when
    fed), the steps that overflow, and the scaler's settings."""
    shapes_ = [d.shape(2, high=7), (d.size(1, 9),)]
    weights = [d.tensor(s, normal=True) for s in shapes_]
    size = d.choice([0.01, 1.0, 30.0])
    grads = [[d.tensor(s, normal=True) * size for s in shapes_] for _ in range(steps)]
    overflow = bad if bad is not None else sorted({d.integer(0, steps - 1), d.integer(2, steps - 1)})
    state = {"scale": 2.0 ** d.integer(4, 16), "growth_tracker": 0,
             "growth_factor": d.choice([2.0, 4.0]), "backoff_factor": d.choice([0.5, 0.25]),
             "growth_interval": interval if interval is not None else d.integer(1, 3)}
    return case(data={
        "weights": weights, "grads": grads, "overflow": overflow, "state": state,
        "bad": bad_value if bad_value is not None else d.choice([float("inf"), float("nan"),
                                                                  float("-inf")]),
        "lr": d.choice([0.01, 0.1]), "max_norm": size * d.choice([0.5, 2.0, 100.0]),
    })


def small_but_clipped(d):
    """From zero weights with lr 1, gradients of global norm a few 1e-3, clipped to half the
    smallest step's: the total is small enough that the 1e-6 in the factor shows in float64."""
    c = problem(d, steps=3, bad=[])
    grads = [[g / g.abs().max() * 1e-3 for g in step] for step in c.data["grads"]]
    totals = [torch.linalg.vector_norm(torch.cat([g.flatten() for g in step])).item()
              for step in grads]
    return case(data={**c.data, "weights": [torch.zeros_like(w) for w in c.data["weights"]],
                      "grads": grads, "lr": 1.0, "max_norm": 0.5 * min(totals)})


def feed(c, step, scale):
    """The gradients of loss * scale at this step, with an overflow where one is planned."""
    grads = [g * scale for g in c.data["grads"][step]]
    if step in c.data["overflow"]:
        flat = grads[step % len(grads)].view(-1)
        flat[step % flat.numel()] = c.data["bad"]
    return grads


def run(sol, c):
    params, state = [w.clone() for w in c.data["weights"]], dict(c.data["state"])
    out = []
    for step in range(len(c.data["grads"])):
        result = sol.call("scaler_step", params, feed(c, step, state["scale"]), state,
                          c.data["lr"], c.data["max_norm"])
        if not isinstance(result, tuple | list) or len(result) != 3:
            fail("scaler_step must return (params, state, stepped)")
        params, state, stepped = result
        if not isinstance(state, dict) or "scale" not in state:
            fail("the new state must be a dict with the same keys")
        out.append([params, float(state["scale"]), int(state["growth_tracker"]),
                    float(bool(stepped))])
    return out


def torch_run(c):
    """torch.amp.GradScaler, clip_grad_norm_ and torch.optim.SGD, in the grader."""
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    opt = torch.optim.SGD(params, lr=c.data["lr"])
    st = c.data["state"]
    scaler = torch.amp.GradScaler("cpu", init_scale=st["scale"], growth_factor=st["growth_factor"],
                                  backoff_factor=st["backoff_factor"],
                                  growth_interval=st["growth_interval"])
    scaler.scale(torch.ones(()))  # creates the scale tensors, as scaling a loss would
    out = []
    for step in range(len(c.data["grads"])):
        for p, g in zip(params, feed(c, step, scaler.get_scale())):
            p.grad = g
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(params, c.data["max_norm"])
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        tracker = int(scaler.state_dict()["_growth_tracker"])
        out.append([[p.detach().clone() for p in params], scaler.get_scale(), tracker,
                    0.0 if step in c.data["overflow"] else 1.0])
    return out


def skipped_step_keeps_params(sol, c):
    """A step with a NaN anywhere leaves every parameter as it was."""
    params = c.data["weights"]
    grads = feed(c, 0, c.data["state"]["scale"])
    grads[-1].view(-1)[0] = float("nan")
    new, state, stepped = sol.call("scaler_step", params, grads, dict(c.data["state"]),
                                   c.data["lr"], c.data["max_norm"])
    if stepped:
        fail("a step with a NaN gradient reported stepped=True")
    for i, (p, w) in enumerate(zip(new, params)):
        if not torch.equal(p, w):
            fail(f"a skipped step changed parameter {i}")
    if not state["scale"] < c.data["state"]["scale"]:
        fail("the scale did not come down after an overflow")


def first_params(sol, c):
    return run(sol, c)[0][0]


def movement(sol, c):
    last = run(sol, c)[-1][0]
    return [p - w for p, w in zip(last, c.data["weights"])]


def timing_case(d):
    """One step on four (32, 32) parameters, no overflow, for the performance test."""
    c = problem(d, steps=1, bad=[])
    weights = [d.tensor((32, 32), normal=True) for _ in range(4)]
    state = dict(c.data["state"])
    grads = [d.tensor((32, 32), normal=True) * state["scale"] for _ in range(4)]
    return case(weights, grads, state, c.data["lr"], 100.0)


DECLARATIONS = [
    trajectory("six steps match GradScaler with clipping", run, problem, expect=torch_run,
               visible=True, cases=3,
               description="params, scale, growth tracker and stepped after each step"),
    trajectory("drawn runs match the reference", run, problem, cases=3),
    edge("clipping at work", run, lambda d: problem(d, bad=[]), expect=torch_run, cases=2,
         description="no overflow; the clipping threshold is about the true gradients"),
    edge("a small total norm, clipped", run, small_but_clipped, expect=torch_run, cases=2,
         dtypes=("float64",), description="gradients of global norm near 1e-3, no overflow"),
    edge("the very first step overflows", run, lambda d: problem(d, bad=[0, 1]),
         expect=torch_run, cases=2),
    edge("NaN without inf", run, lambda d: problem(d, bad=[1, 4], bad_value=float("nan")),
         expect=torch_run, cases=2),
    edge("growth after every good step", run, lambda d: problem(d, interval=1),
         expect=torch_run, cases=2),
    edge("an overflow in the middle of a growth interval", run,
         lambda d: problem(d, bad=[2], interval=3), expect=torch_run, cases=2,
         description="the growth count starts again after a skipped step"),
    shapes("parameters keep shape and dtype", first_params,
           lambda d: problem(d, steps=1, bad=[]), dtypes=("float32", "float64"), cases=2),
    prop("a skipped step changes no parameter", skipped_step_keeps_params,
         lambda d: problem(d, steps=1, bad=[]), cases=2, visible=True),
    nontrivial("the weights move", movement, lambda d: problem(d, bad=[1])),
    performance("time against the reference", "scaler_step", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("writes the scaler's logic itself", visible=True,
             description="no torch.amp and no _amp_ internals"),
]
