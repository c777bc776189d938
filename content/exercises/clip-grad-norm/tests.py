import math

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


def problem(d, scale=None, max_norm=None, norm_type=2.0, missing=True, count=None):
    """A few parameters of drawn shapes with gradients; one may have none (.grad None)."""
    count = count if count is not None else d.integer(1, 4)
    shapes_ = [d.shape((1, 3), high=9) for _ in range(count)]
    scale = scale if scale is not None else d.choice([0.01, 1.0, 10.0])
    grads = [d.tensor(s, normal=True) * scale for s in shapes_]
    has_grad = [True] * count
    if missing and count > 1 and d.integer(0, 1):
        has_grad[d.integer(0, count - 1)] = False
    return case(data={
        "weights": [d.tensor(s) for s in shapes_],
        "grads": grads,
        "has_grad": has_grad,
        "max_norm": max_norm if max_norm is not None else d.choice([0.5, 1.0, 5.0]),
        "norm_type": norm_type,
    })


def clip(sol, c):
    """Parameters with injected gradients, clipped; the returned norm and every .grad after."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    for i, (g, has) in enumerate(zip(c.data["grads"], c.data["has_grad"], strict=True)):
        if has:
            sol.set(sol.index(params, i), "grad", g)
    total = sol.call("clip_grad_norm_", params, c.data["max_norm"],
                     norm_type=c.data["norm_type"])
    after = [sol.get(sol.index(params, i), "grad") for i in range(len(c.data["weights"]))]
    return {"total_norm": total, "grads": after}


def torch_clip(c):
    """The same with torch.nn.utils.clip_grad_norm_, in the grader."""
    params = [w.clone().requires_grad_(True) for w in c.data["weights"]]
    for p, g, has in zip(params, c.data["grads"], c.data["has_grad"], strict=True):
        if has:
            p.grad = g.clone()
    total = torch.nn.utils.clip_grad_norm_(params, c.data["max_norm"],
                                           norm_type=c.data["norm_type"])
    return {"total_norm": total, "grads": [p.grad for p in params]}


def clip_default_norm(sol, c):
    """As clip, with norm_type left to its default."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    for i, (g, has) in enumerate(zip(c.data["grads"], c.data["has_grad"], strict=True)):
        if has:
            sol.set(sol.index(params, i), "grad", g)
    total = sol.call("clip_grad_norm_", params, c.data["max_norm"])
    after = [sol.get(sol.index(params, i), "grad") for i in range(len(c.data["weights"]))]
    return {"total_norm": total, "grads": after}


def clip_held(sol, c):
    """As clip, the gradients read back through the tensors the caller set as .grad (as an
    optimiser or a hook holding them would see them): clipping scales them in place."""
    params = sol.keep([w.clone().requires_grad_(True) for w in c.data["weights"]])
    held = {}
    for i, (g, has) in enumerate(zip(c.data["grads"], c.data["has_grad"], strict=True)):
        if has:
            held[i] = sol.keep(g)
            sol.set(sol.index(params, i), "grad", held[i])
    sol.call("clip_grad_norm_", params, c.data["max_norm"], norm_type=c.data["norm_type"])
    grads = [sol.get(held[i]) if i in held else None for i in range(len(c.data["weights"]))]
    return {"the gradient tensors the caller holds": grads}


def torch_clip_held(c):
    return {"the gradient tensors the caller holds": torch_clip(c)["grads"]}


def small_but_clipped(d):
    """Gradients of global norm about 1e-2, clipped to a drawn fraction of it: the total is
    small enough that the 1e-6 in the factor shows in float64."""
    c = problem(d, scale=1e-3, missing=False)
    total = math.sqrt(sum(float((g.double() ** 2).sum()) for g in c.data["grads"]))
    return case(data={**c.data, "max_norm": total * d.choice([0.2, 0.5, 0.9])})


def clips(c):
    """The global 2-norm of the case's gradients exceeds max_norm."""
    total = math.sqrt(sum(float((g.double() ** 2).sum())
                          for g, has in zip(c.data["grads"], c.data["has_grad"]) if has))
    return total > c.data["max_norm"]


def several_steps(sol, c):
    """Clipping three batches of gradients in a row, as a training loop would."""
    out = []
    for k in range(3):
        step = case(data={**c.data, "grads": [g * (3.0**k) for g in c.data["grads"]]})
        out.append(clip(sol, step))
    return out


def torch_several_steps(c):
    return [torch_clip(case(data={**c.data, "grads": [g * (3.0**k) for g in c.data["grads"]]}))
            for k in range(3)]


def lands_on_max_norm(sol, c):
    """Large gradients come out with a global norm of max_norm, all scaled by one factor."""
    result = clip(sol, c)
    after = answer(result["grads"], "gradients after clipping", count=len(c.data["grads"]))
    kept = [(g, answer(a, f"gradient {i} after clipping", g.shape))
            for i, (g, a, has) in enumerate(zip(c.data["grads"], after, c.data["has_grad"],
                                                strict=True)) if has]
    norm = math.sqrt(sum(float((a.double() ** 2).sum()) for _, a in kept))
    target = torch.tensor(c.data["max_norm"], dtype=torch.float64)
    expect_close(torch.tensor(norm, dtype=torch.float64), target,
                 "global norm after clipping", scale=10)
    factor = c.data["max_norm"] / math.sqrt(sum(float((g.double() ** 2).sum()) for g, _ in kept))
    for i, (g, a) in enumerate(kept):
        expect_close(a, g * factor, f"gradient {i}: the same factor for every gradient",
                     scale=10)


def small_left_alone(sol, c):
    result = clip(sol, c)
    for i, (g, a, has) in enumerate(zip(c.data["grads"], result["grads"], c.data["has_grad"],
                                        strict=True)):
        if has:
            expect_close(a, g, f"gradient {i}, whose global norm was below max_norm")
        elif a is not None:
            fail(f"parameter {i} had no gradient and was given one")


# The performance test's parameters: a weight, its bias and a second weight.
TIMED_SHAPES = [(128, 128), (128,), (32, 128)]


def timed_clips(d):
    """A timed call clips the setup's gradients to max_norm, the call's one argument. It
    halves from each call of a round to the next (d.case counts the round's calls), so that
    every call clips, the gradients never left under the limit by the call before."""
    return case(2.0 ** -d.case, data={"seed": d.integer(0, 2**62)})


def clipper(sol, c):
    """The performance test's setup, outside the clock: parameters kept in the solution's
    process with their gradients set, and clip_grad_norm_ bound to them.

    The timed target is a method of what the setup builds, and the parameters cannot travel
    with each call's arguments (a tensor's .grad is not sent), so the setup binds the
    learner's function to the kept list with the descriptor protocol:
    clip_grad_norm_.__get__(params) is a method object whose __call__(max_norm) runs
    clip_grad_norm_(params, max_norm). Only the learner's own function runs."""
    g = torch.Generator().manual_seed(c.data["seed"])
    params = sol.keep([torch.randn(s, generator=g).requires_grad_(True) for s in TIMED_SHAPES])
    for i, s in enumerate(TIMED_SHAPES):
        sol.set(sol.index(params, i), "grad", torch.randn(s, generator=g))
    return sol.new("clip_grad_norm_.__get__", params)


DECLARATIONS = [
    values("clips like torch.nn.utils.clip_grad_norm_", clip, problem, visible=True,
           expect=torch_clip, cases=4,
           description="the returned norm and every .grad after, some .grad None"),
    values("large gradients, drawn max_norm", clip, lambda d: problem(d, scale=50.0),
           expect=torch_clip, cases=3, dtypes=("float32", "float64")),
    values("the infinity norm", clip,
           lambda d: problem(d, norm_type=float("inf"), scale=d.choice([0.1, 20.0])),
           expect=torch_clip, cases=3, visible=True,
           description="norm_type=float('inf'): the largest absolute value"),
    values("norm_type left to its default", clip_default_norm, lambda d: problem(d, scale=10.0),
           expect=torch_clip, cases=2, guarantee=clips),
    values("a small total norm, clipped", clip, small_but_clipped, expect=torch_clip, cases=3,
           dtypes=("float64",), guarantee=clips,
           description="gradients of global norm near 1e-2, max_norm below it"),
    values("the caller's gradient tensors are scaled in place", clip_held,
           lambda d: problem(d, scale=50.0), expect=torch_clip_held, cases=2, guarantee=clips,
           description="anyone holding a .grad (an optimiser, a hook) sees it clipped"),
    trajectory("three clipping steps in a row", several_steps, problem,
               expect=torch_several_steps),
    shapes("gradients keep shape and dtype", clip, problem, dtypes=("float32", "float64")),
    edge("no parameter has a gradient", clip,
         lambda d: case(data={**problem(d).data, "has_grad": [False] * 2,
                              "weights": [d.tensor((2,)), d.tensor((3,))],
                              "grads": [d.tensor((2,)), d.tensor((3,))]}),
         expect=torch_clip, cases=1, description="the returned norm is tensor(0.)"),
    edge("a single scalar parameter", clip,
         lambda d: case(data={**problem(d, count=1, missing=False).data,
                              "weights": [d.tensor(())], "grads": [d.tensor(()) * 100]}),
         expect=torch_clip, cases=2),
    edge("a parameter with zero elements", clip,
         lambda d: case(data={**problem(d, count=2, missing=False, scale=20.0).data,
                              "weights": [d.tensor((0,)), d.tensor((3,))],
                              "grads": [d.tensor((0,)), d.tensor((3,)) * 20.0],
                              "norm_type": (float("inf"), 2.0)[d.case % 2]}),
         cases=2, description="it adds nothing to the norm, in either norm_type"),
    prop("clipped gradients have norm max_norm and keep their direction", lands_on_max_norm,
         lambda d: problem(d, scale=30.0), cases=3),
    prop("gradients below max_norm are left alone", small_left_alone,
         lambda d: problem(d, scale=1e-3, max_norm=10.0), cases=2),
    nontrivial("the returned norm is not zero", clip, problem),
    performance("time against the reference", "__call__", timed_clips, setup=clipper,
                description="clipping the gradients of 20,608 parameters in three tensors "
                "(the 2-norm, each call to a lower max_norm); reported with its spread, not "
                "graded in this exercise"),
    api_rule("does not call torch.nn.utils", visible=True),
]
