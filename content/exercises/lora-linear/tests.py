import torch
import torch.nn.functional as F

from sandbox.grading import case, edge, expect_close, fail, gradients, nontrivial, performance
from sandbox.grading import prop, shapes
from sandbox.grading import values


def functional(d, *, bias=True, high=9):
    """x of one to three dims, a base layer and nonzero adapters."""
    inp, out, r = d.size(1, 12), d.size(1, 12), d.size(1, 4)
    x = d.tensor((*d.shape((0, 2), high=5), inp))
    b = d.tensor((out,), low=-1, high=1) if bias else None
    a = d.tensor((r, inp), low=-0.5, high=0.5)
    b_up = d.tensor((out, r), low=-0.5, high=0.5)
    return case(x, d.weights(inp, out), b, a, b_up, d.choice([1.0, 4.0, 8.0, 16.0]))


def formula(c):
    x, weight, bias, a, b_up, alpha = c.args
    return F.linear(x, weight, bias) + alpha / a.shape[0] * (x @ a.T @ b_up.T)


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def module(d, *, bias=True):
    inp, out, r = d.size(1, 12), d.size(1, 12), d.size(1, 4)
    b = d.tensor((out,), low=-1, high=1) if bias or d.case == 0 else None
    x = d.tensor((d.size(1, 5), inp))
    return case(data={"weight": d.weights(inp, out), "bias": b, "r": r,
                      "alpha": d.choice([1.0, 8.0, 16.0]), "x": x,
                      "grad_out": d.tensor((x.shape[0], out), normal=True)})  # fmt: skip


def build(sol, c):
    return sol.new("LoRALinear", c.data["weight"], c.data["bias"], c.data["r"], c.data["alpha"])


def backward(sol, layer, c):
    """Forward and backward in the learner's process, for L = sum(grad_out * layer(x))."""
    out = sol.method_ref(layer, "forward", c.data["x"])
    loss = sol.method_ref(sol.method_ref(out, "mul", c.data["grad_out"]), "sum")
    sol.method(loss, "backward")


def starts_as_base(sol, c):
    layer = build(sol, c)
    expect_close(sol.method(layer, "forward", c.data["x"]),
                 F.linear(c.data["x"], c.data["weight"], c.data["bias"]),
                 "a fresh layer's output against its base linear layer")  # fmt: skip


def only_adapters_learn(sol, c):
    layer = build(sol, c)
    backward(sol, layer, c)
    frozen = ["weight"] + (["bias"] if c.data["bias"] is not None else [])
    for name in frozen:
        p = sol.method_ref(layer, "get_parameter", name)
        if sol.get(p, "requires_grad") is not False:
            fail(f"{name} requires grad: the base layer must be frozen")
        if sol.get(p, "grad") is not None:
            fail(f"{name} received a gradient")
    for name in ("lora_A", "lora_B"):
        p = sol.method_ref(layer, "get_parameter", name)
        if sol.get(p, "requires_grad") is not True or sol.get(p, "grad") is None:
            fail(f"{name} received no gradient")


def first_gradients(sol, c):
    """At B = 0: dL/dB = (alpha / r) g^T (x A^T) and dL/dA = 0, with the learner's own A."""
    layer = build(sol, c)
    a = sol.get(sol.method_ref(layer, "get_parameter", "lora_A"))
    a = shaped(a, (c.data["r"], c.data["weight"].shape[1]), "lora_A")
    if bool((a == 0).all()):
        fail("lora_A must not be all zero")
    backward(sol, layer, c)
    scaling = c.data["alpha"] / c.data["r"]
    g, x = c.data["grad_out"], c.data["x"]
    grad_b = sol.get(sol.method_ref(layer, "get_parameter", "lora_B"), "grad")
    grad_a = sol.get(sol.method_ref(layer, "get_parameter", "lora_A"), "grad")
    expect_close(grad_b, scaling * g.T @ (x @ a.T), "lora_B's first gradient")
    expect_close(grad_a, torch.zeros_like(a), "lora_A's first gradient (B is zero)")


def copies_base(sol, c):
    """The layer keeps copies of weight and bias: changing the caller's tensors in place
    afterwards leaves a fresh layer's output unchanged."""
    weight, bias = c.data["weight"], c.data["bias"]
    kept = sol.keep([weight.clone(), bias.clone()])
    layer = sol.new("LoRALinear", sol.index(kept, 0), sol.index(kept, 1), c.data["r"],
                    c.data["alpha"])  # fmt: skip
    for i in range(2):
        sol.method(sol.index(kept, i), "add_", 1.0)
    expect_close(sol.method(layer, "forward", c.data["x"]), F.linear(c.data["x"], weight, bias),
                 "a fresh layer's output after the caller changed its weight and bias")  # fmt: skip


def random_init(sol, c):
    """lora_A starts finite, small and nonzero, and drawn afresh for every layer."""
    shape_a = (c.data["r"], c.data["weight"].shape[1])
    drawn = []
    for _ in range(2):
        a = sol.get(sol.method_ref(build(sol, c), "get_parameter", "lora_A"))
        a = shaped(a, shape_a, "lora_A")
        if not bool(torch.isfinite(a).all()):
            fail("lora_A holds values that are not finite")
        vanishing = int((a.abs() < 1e-6).sum())
        if 2 * vanishing > a.numel() or float(a.abs().max()) > 10:
            fail("lora_A must start with small nonzero values")
        drawn.append(a)
    if torch.equal(drawn[0], drawn[1]):
        fail("two fresh layers start with the same lora_A: it should be drawn at random")


def sgd_steps(sol, c, steps=3, lr=0.1):
    """Three SGD steps on the adapters, driven in the learner's process, against the same
    steps computed here from the learner's initial A."""
    layer = build(sol, c)
    refs = {n: sol.method_ref(layer, "get_parameter", n) for n in ("lora_A", "lora_B")}
    shape_a = (c.data["r"], c.data["weight"].shape[1])
    a = shaped(sol.get(refs["lora_A"]), shape_a, "lora_A").clone().requires_grad_(True)
    b_up = torch.zeros(c.data["weight"].shape[0], c.data["r"], requires_grad=True)
    for step in range(steps):
        backward(sol, layer, c)
        for name, ref in refs.items():
            grad = sol.get(ref, "grad")
            if grad is None:
                fail(f"step {step}: an adapter received no gradient")
            want = shape_a if name == "lora_A" else (c.data["weight"].shape[0], c.data["r"])
            grad = shaped(grad, want, f"{name}'s gradient")
            sol.method(sol.method_ref(ref, "detach"), "sub_", lr * grad)
            sol.set(ref, "grad", None)
        mine = lora_formula(c, a, b_up)
        ga, gb = torch.autograd.grad((mine * c.data["grad_out"]).sum(), [a, b_up])
        with torch.no_grad():
            a -= lr * ga
            b_up -= lr * gb
        expect_close(sol.method(layer, "forward", c.data["x"]), lora_formula(c, a, b_up).detach(),
                     f"output after SGD step {step + 1}", scale=10)  # fmt: skip


def lora_formula(c, a, b_up):
    x = c.data["x"]
    base = F.linear(x, c.data["weight"], c.data["bias"])
    return base + c.data["alpha"] / c.data["r"] * (x @ a.T @ b_up.T)


def timed_rows(d):
    """32 rows of 128 features; the case also carries the seed of the layer's base weight."""
    return case(d.tensor((32, 128)), data={"seed": d.integer(0, 2**62)})


def timed_layer(sol, c):
    """The performance test's setup, outside the clock: a rank-8 LoRALinear over a (128, 128)
    base weight and its bias, drawn from the case's seed (drawing them for every call would
    cost more than the forwards do)."""
    g = torch.Generator().manual_seed(c.data["seed"])
    weight = (torch.rand(128, 128, generator=g) - 0.5) / 6  # about nn.Linear's scale
    return sol.new("LoRALinear", weight, torch.rand(128, generator=g) - 0.5, 8, 16.0)


DECLARATIONS = [
    values("lora_forward with nonzero adapters", "lora_forward", functional, expect=formula,
           visible=True, description="x W^T + b + (alpha / r) (x A^T) B^T"),
    values("lora_forward on drawn ranks and scales", "lora_forward", functional,
           expect=formula, cases=4),
    values("lora_forward without a bias", "lora_forward",
           lambda d: functional(d, bias=False), expect=formula, dtypes=("float32", "float64")),
    shapes("output shape and dtype", "lora_forward", functional, dtypes=("float32", "float64")),
    gradients("gradients through lora_forward", "lora_forward", functional),
    prop("a fresh layer equals its base layer", starts_as_base, module, visible=True,
         description="lora_B starts at zero"),
    prop("a fresh layer equals its base layer on more shapes", starts_as_base,
         lambda d: module(d, bias=False), cases=3),
    prop("only lora_A and lora_B receive gradients", only_adapters_learn, module, visible=True),
    prop("the base stays frozen, with or without a bias", only_adapters_learn,
         lambda d: module(d, bias=False), cases=3),
    prop("the first gradients reach lora_B", first_gradients, module, cases=3),
    prop("the layer keeps its own copies of weight and bias", copies_base, module, cases=2),
    prop("lora_A starts small, nonzero and random", random_init, module, cases=3),
    prop("three SGD steps on the adapters", sgd_steps, module, cases=2),
    edge("rank one", "lora_forward",
         lambda d: case(d.tensor((3, 5)), d.weights(5, 4), None, d.tensor((1, 5)),
                        d.tensor((4, 1)), 2.0),
         expect=formula, cases=1),
    nontrivial("the output is not zero", "lora_forward", functional),
    performance("time against the reference", "forward", timed_rows, setup=timed_layer,
                description="a forward of 32 rows through a rank-8 adapter over a (128, 128) "
                "base, with autograd recording; reported with its spread, not graded in this "
                "exercise"),
]
