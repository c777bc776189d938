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
    values,
)

F64 = torch.float64


def draw_inputs(d, *, batch=None, tokens=None, dim, masked_rows=0, zero_rows=0):
    """hidden (B, T, D) and a mask (B, T) whose rows keep from none to all tokens: padding
    at the end as a tokenizer leaves it, or scattered."""
    b = batch if batch is not None else d.size(1, 7)
    t = tokens if tokens is not None else d.size(1, 9)
    hidden = d.tensor((b, t, dim), normal=True) * d.choice([0.5, 1.0, 3.0])
    if d.integer(0, 1):
        lengths = d.integers((b, 1), 0, t + 1)
        mask = torch.arange(t).unsqueeze(0) < lengths
    else:
        mask = d.integers((b, t), 0, 2).bool()
    rows = d.permutation(b)
    for r in rows[:masked_rows]:
        mask[r] = False
    for r in rows[masked_rows : masked_rows + zero_rows]:
        hidden[r] = 0.0
        mask[r, 0] = True
    return hidden, mask


def pooler_case(d, *, empty_zero=False, **shape):
    dim = shape.pop("dim", None) or d.size(1, 8)
    b = shape.pop("batch", None)
    b = b if b is not None else d.size(1, 7)
    hidden, mask = draw_inputs(
        d,
        batch=b,
        dim=dim,
        masked_rows=shape.pop("masked", b // 3),
        zero_rows=shape.pop("zero", 0),
        **shape,
    )
    empty = torch.zeros(dim) if empty_zero else d.tensor((dim,), normal=True, dtype="float32")
    return case(hidden, mask, data={"dim": dim, "empty": empty})


def build(sol, c):
    pooler = sol.new("SentencePooler", c.data["dim"])
    sol.method(pooler, "load_state_dict", {"empty": c.data["empty"]})
    return pooler


def run(sol, c):
    return sol.method(build(sol, c), "forward", *c.args)


def trusted_pool(hidden, mask, empty):
    """Row by row, in float64, in the grader."""
    out = torch.zeros(hidden.shape[0], hidden.shape[2], dtype=F64)
    for b in range(hidden.shape[0]):
        keep = mask[b]
        v = hidden[b][keep].double().mean(dim=0) if bool(keep.any()) else empty.double()
        norm = float(torch.linalg.vector_norm(v))
        out[b] = v / norm if norm > 0 else v
    return out.to(hidden.dtype)


def trusted(c):
    return trusted_pool(*c.args, c.data["empty"])


def trusted_grad(hidden, mask, empty, grad_out):
    """d(sum(out * grad_out)) / d hidden of the row-by-row pooling, in float64."""
    h = hidden.detach().double().requires_grad_(True)
    rows = []
    for b in range(h.shape[0]):
        keep = mask[b]
        v = h[b][keep].mean(dim=0) if bool(keep.any()) else empty.double()
        norm = torch.linalg.vector_norm(v)
        rows.append(v / norm if float(norm.detach()) > 0 else v)
    total = (torch.stack(rows) * grad_out.double()).sum() if rows else None
    if total is not None and total.requires_grad:  # not when every row is fully masked
        total.backward()
    return h.grad if h.grad is not None else torch.zeros_like(h)


def with_grad_out(d):
    c = pooler_case(d, batch=d.size(3, 7), masked=1)
    c.data["grad_out"] = d.tensor((c.args[0].shape[0], c.data["dim"]), normal=True)
    return c


def gradients_are_finite(sol, c):
    """Fine-tuning backpropagates through the pooling: fully masked rows must
    give finite gradients (torch.where passes a NaN from its unused side on as NaN)."""
    hidden, mask = c.args
    pooler = build(sol, c)
    _, grads = sol.vjp("SentencePooler.forward", (pooler, hidden, mask), c.data["grad_out"])
    grad = grads[1]
    if grad is None:
        fail("no gradient reached hidden")
    if not bool(torch.isfinite(grad).all()):
        fail(
            "the gradient with respect to hidden has NaN or inf (a division by zero on the "
            "unused side of a torch.where?)"
        )
    want = trusted_grad(hidden, mask, c.data["empty"], c.data["grad_out"])
    expect_close(grad, want.to(grad.dtype), "the gradient with respect to hidden", scale=10)


def exported_case(d):
    dim = d.size(2, 6)
    example = draw_inputs(d, batch=3, tokens=5, dim=dim, masked_rows=1)
    others = [
        draw_inputs(
            d,
            batch=d.choice([1, 2, 5, 7]),
            tokens=d.choice([1, 3, 8, 11]),
            dim=dim,
            masked_rows=d.integer(0, 1),
            zero_rows=d.integer(0, 1),
        )
        for _ in range(3)
    ]
    others.append(draw_inputs(d, batch=4, tokens=6, dim=dim, masked_rows=0))
    return case(
        data={
            "dim": dim,
            "empty": d.tensor((dim,), normal=True, dtype="float32"),
            "example": example,
            "others": others,
        }
    )


def exports_as_one_graph(sol, c):
    """torch.export with a dynamic batch and length, in the solution's process; the exported
    program then runs on other shapes and on rows that take the other branches."""
    pooler = build(sol, c)
    batch, tokens = sol.new("torch.export.Dim", "batch"), sol.new("torch.export.Dim", "tokens")
    dims = {0: batch, 1: tokens}
    program = sol.new(
        "torch.export.export",
        pooler,
        tuple(c.data["example"]),
        dynamic_shapes=(dims, dims),
        strict=False,
    )
    module = sol.method_ref(program, "module")
    for i, (hidden, mask) in enumerate(c.data["others"]):
        got = sol.method(module, "forward", hidden, mask)
        want = trusted_pool(hidden, mask, c.data["empty"])
        expect_close(
            got,
            want,
            f"the exported program on input {i} (B={hidden.shape[0]}, T={hidden.shape[1]})",
        )


def unit_or_zero(sol, c):
    out = run(sol, c)
    norms = torch.linalg.vector_norm(out.double(), dim=-1)
    if not bool(((norms - 1).abs() < 1e-5).logical_or(norms == 0).all()):
        fail(f"every row should have norm 1 (or be all zeros); norms {norms.tolist()}")


def timing_setup(sol, c):
    return build(sol, c)


def timing_case(d):
    """A (32, 64, 64) batch, a quarter of its tokens padding, for the performance test."""
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(32, 64, 64, generator=g)
    mask = torch.arange(64).unsqueeze(0) < torch.randint(0, 65, (32, 1), generator=g)
    return case(hidden, mask, data={"dim": 64, "empty": torch.ones(64)})


DECLARATIONS = [
    values(
        "pooled, normalised vectors",
        run,
        pooler_case,
        expect=trusted,
        visible=True,
        cases=3,
        dtypes=("float32", "float64"),
        description="padding at the end or scattered; a third of the rows fully masked",
    ),
    values("match the reference", run, pooler_case, cases=3, dtypes=("float32", "float64")),
    edge(
        "rows with no valid token",
        run,
        lambda d: pooler_case(d, masked=d.size(1, 3), batch=d.size(3, 6)),
        expect=trusted,
        cases=3,
        description="they take the learned `empty` vector",
    ),
    edge(
        "rows whose mean is zero, and a zero `empty`",
        run,
        lambda d: pooler_case(d, empty_zero=True, batch=4, masked=1, zero=2),
        expect=trusted,
        cases=2,
        dtypes=("float32", "float64"),
    ),
    edge(
        "a single row, a single token",
        run,
        lambda d: pooler_case(d, batch=1, tokens=1, masked=0),
        expect=trusted,
        cases=2,
    ),
    edge(
        "an empty batch", run, lambda d: pooler_case(d, batch=0, masked=0), expect=trusted, cases=1
    ),
    shapes("(B, D) in hidden's dtype", run, pooler_case, cases=2, dtypes=("float32", "float64")),
    prop("each row has norm 1, or is zero", unit_or_zero, pooler_case, cases=3),
    prop(
        "torch.export captures it with dynamic batch and length",
        exports_as_one_graph,
        exported_case,
        cases=2,
        description="exported once, then run on other shapes and on rows of every kind",
    ),
    prop(
        "gradients through fully masked rows are finite",
        gradients_are_finite,
        with_grad_out,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    nontrivial("the vectors are not zero", run, pooler_case),
    performance(
        "time against the reference",
        "forward",
        timing_case,
        setup=timing_setup,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
    api_rule(
        "no host reads, no data-dependent shapes",
        visible=True,
        description="no print, .item(), .tolist(), .numpy(), .cpu(), nonzero or masked_select",
    ),
]
