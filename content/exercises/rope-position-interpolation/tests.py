import torch

from sandbox.grading import (
    case,
    edge,
    expect_close,
    fail,
    gradients,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)


def trusted_tables(positions, dim, base=10000.0, scale=1.0, alpha=1.0):
    """The tables written from the statement with Python floats, one angle at a time."""
    new_base = base * alpha ** (dim / (dim - 2))
    rows = [[float(p) / scale * new_base ** (-2 * i / dim) for i in range(dim // 2)]
            for p in positions.tolist()]  # fmt: skip
    angles = torch.tensor(rows, dtype=torch.float64).reshape(len(rows), dim // 2)
    return angles.cos(), angles.sin()


def trusted_rope(x, cos, sin):
    """Each pair (2i, 2i + 1) turned by its own 2x2 rotation, in float64."""
    x64 = x.to(torch.float64)
    out = torch.empty_like(x64)
    for i in range(x.shape[-1] // 2):
        c, s = cos[:, i], sin[:, i]
        a, b = x64[..., 2 * i], x64[..., 2 * i + 1]
        out[..., 2 * i] = a * c - b * s
        out[..., 2 * i + 1] = a * s + b * c
    return out


def draw_positions(d, length, top=64):
    if d.random.random() < 0.5:
        return d.integer(0, top) + torch.arange(length)
    return d.integers((length,), 0, top)


def table_case(d, *, scale=False, alpha=False, far=False, high=12):
    """positions (T,) int64 and head_dim, with a drawn base; scale and ntk_alpha when asked."""
    dim = 2 * d.size(2, 16)
    positions = draw_positions(d, d.size(1, high), top=8000 if far else 200)
    kwargs = {"base": d.choice([10000.0, 500.0, 500000.0])}
    if scale:
        kwargs["scale"] = d.choice([2.0, 4.0, 8.0, 2.5])
    if alpha:
        kwargs["ntk_alpha"] = d.choice([2.0, 4.0, 8.0, 3.0])
    return case(positions, dim, **kwargs)


def rope_case(d, *, high=10, table_dtype=torch.float64):
    """x of shape (B, H, T, D) and tables for drawn positions, scale and alpha."""
    dim = 2 * d.size(2, 12)
    length = d.size(1, high)
    x = d.tensor((d.size(1, 3), d.size(1, 3), length, dim))
    positions = draw_positions(d, length, top=2000)
    cos, sin = trusted_tables(positions, dim, scale=d.choice([1.0, 2.0, 4.0]),
                              alpha=d.choice([1.0, 2.0, 8.0]))  # fmt: skip
    return case(x, cos.to(table_dtype), sin.to(table_dtype))


def end_to_end_case(d):
    """x of shape (B, H, T, D), its positions, and a scale and alpha for both functions."""
    dim = 2 * d.size(2, 12)
    length = d.size(1, 10)
    x = d.tensor((d.size(1, 3), d.size(1, 3), length, dim))
    return case(x, data={"positions": draw_positions(d, length, top=3000),
                         "scale": d.choice([1.0, 2.0, 4.0, 1.5]),
                         "alpha": d.choice([1.0, 2.0, 8.0])})  # fmt: skip


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def tables_of(sol, positions, dim, where, **kwargs):
    answer = sol.call("rope_tables", positions, dim, **kwargs)
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        fail(f"{where}: rope_tables should return a pair (cos, sin)")
    shape = (positions.shape[0], dim // 2)
    return shaped(answer[0], shape, f"{where}, cos"), shaped(answer[1], shape, f"{where}, sin")


def end_to_end(sol, c):
    (x,) = c.args
    cos, sin = tables_of(sol, c.data["positions"], x.shape[-1], "the tables",
                         scale=c.data["scale"], ntk_alpha=c.data["alpha"])  # fmt: skip
    return sol.call("apply_rope", x, cos, sin)


def trusted_end_to_end(c):
    (x,) = c.args
    cos, sin = trusted_tables(c.data["positions"], x.shape[-1], scale=c.data["scale"],
                              alpha=c.data["alpha"])  # fmt: skip
    return trusted_rope(x, cos, sin).to(x.dtype)


def trusted_tables_of(c):
    positions, dim = c.args
    kw = c.kwargs
    return trusted_tables(positions, dim, kw.get("base", 10000.0), kw.get("scale", 1.0),
                          kw.get("ntk_alpha", 1.0))  # fmt: skip


def plain_rope_when_unscaled(sol, c):
    """scale = 1 and ntk_alpha = 1 (left out) give plain interleaved RoPE."""
    (x,) = c.args
    positions = c.data["positions"]
    dim = x.shape[-1]
    angles = positions.to(torch.float64)[:, None] * torch.tensor(
        [10000.0 ** (-2 * i / dim) for i in range(dim // 2)], dtype=torch.float64
    )
    cos, sin = tables_of(sol, positions, dim, "plain tables")
    out = shaped(sol.call("apply_rope", x, cos, sin), x.shape, "output")
    expect_close(
        out,
        trusted_rope(x, angles.cos(), angles.sin()).to(x.dtype),
        "plain RoPE, scale and ntk_alpha left at 1",
    )


def shift_invariance(sol, c):
    """q.k is unchanged when both positions move by the same amount, whatever the scaling."""
    q, k, pq, pk, s = (c.data[key] for key in ("q", "k", "pq", "pk", "shift"))
    dim = q.shape[-1]
    kw = {"scale": c.data["scale"], "ntk_alpha": c.data["alpha"]}

    def dots(a, b):
        cq, sq = tables_of(sol, a, dim, "query tables", **kw)
        ck, sk = tables_of(sol, b, dim, "key tables", **kw)
        rq = shaped(sol.call("apply_rope", q, cq, sq), q.shape, "rotated queries")
        rk = shaped(sol.call("apply_rope", k, ck, sk), k.shape, "rotated keys")
        return (rq * rk).sum(-1)

    expect_close(
        dots(pq + s, pk + s), dots(pq, pk), f"q.k with both positions moved by {s}", scale=10
    )


def pairs(d):
    """Queries and keys of shape (1, 1, n, D), their positions, a shift, scale and alpha."""
    n, dim = d.size(1, 9), 2 * d.size(2, 10)
    return case(data={
        "q": d.tensor((1, 1, n, dim)), "k": d.tensor((1, 1, n, dim)),
        "pq": d.integers((n,), 0, 500), "pk": d.integers((n,), 0, 500),
        "shift": d.integer(1, 400), "scale": d.choice([1.0, 2.0, 4.0]),
        "alpha": d.choice([1.0, 2.0, 8.0]),
    })  # fmt: skip


def interpolation_divides_positions(sol, c):
    """Position s * p with scale s gets exactly the angles of position p unscaled."""
    positions, dim = c.args
    s = c.kwargs["scale"]
    base = c.kwargs["base"]
    scaled = tables_of(sol, positions.to(torch.float64) * s, dim, "tables of s * p with scale s",
                       base=base, scale=s)  # fmt: skip
    plain = tables_of(sol, positions, dim, "tables of p unscaled", base=base)
    expect_close(scaled[0], plain[0], "cos of s * p with scale s against cos of p")
    expect_close(scaled[1], plain[1], "sin of s * p with scale s against sin of p")


def ntk_ends(sol, c):
    """NTK scaling keeps the fastest pair (i = 0) as it is and slows the slowest pair by
    exactly ntk_alpha, as a linear interpolation by ntk_alpha would."""
    positions, dim = c.args
    alpha, base = c.kwargs["ntk_alpha"], c.kwargs["base"]
    ntk = tables_of(sol, positions, dim, "NTK tables", base=base, ntk_alpha=alpha)
    plain = tables_of(sol, positions, dim, "plain tables", base=base)
    linear = tables_of(sol, positions, dim, "tables with scale = alpha", base=base, scale=alpha)
    for j, name in enumerate(("cos", "sin")):
        expect_close(ntk[j][:, 0], plain[j][:, 0], f"{name} of the first pair with NTK scaling")
        expect_close(
            ntk[j][:, -1],
            linear[j][:, -1],
            f"{name} of the last pair with NTK scaling against scale = alpha",
        )


def norms_preserved(sol, c):
    x, cos, sin = c.args
    out = shaped(sol.call("apply_rope", x, cos, sin), x.shape, "output")
    expect_close(out.norm(dim=-1), x.norm(dim=-1), "the norm of each rotated vector", scale=10)


def position_zero_is_identity(sol, c):
    (x,) = c.args
    zeros = torch.zeros(x.shape[-2], dtype=torch.int64)
    cos, sin = tables_of(sol, zeros, x.shape[-1], "tables at position 0", scale=2.0,
                         ntk_alpha=4.0)  # fmt: skip
    expect_close(sol.call("apply_rope", x, cos, sin), x, "x rotated at position 0")


def timing_case(d):
    """x of shape (2, 4, 32, 32) and float32 tables for positions 0..31."""
    cos, sin = trusted_tables(torch.arange(32), 32, scale=2.0, alpha=2.0)
    return case(d.tensor((2, 4, 32, 32)), cos.float(), sin.float())


DECLARATIONS = [
    values(
        "plain tables",
        "rope_tables",
        table_case,
        visible=True,
        expect=trusted_tables_of,
        description="scale and ntk_alpha left at 1, a drawn base",
    ),
    values(
        "tables with position interpolation",
        "rope_tables",
        lambda d: table_case(d, scale=True),
        expect=trusted_tables_of,
        cases=4,
    ),
    values(
        "tables with NTK-aware scaling",
        "rope_tables",
        lambda d: table_case(d, alpha=True),
        expect=trusted_tables_of,
        cases=4,
    ),
    values(
        "tables with both, far positions",
        "rope_tables",
        lambda d: table_case(d, scale=True, alpha=True, far=True),
        cases=4,
    ),
    values(
        "apply_rope with float64 tables",
        "apply_rope",
        rope_case,
        visible=True,
        dtypes=("float32", "float64"),
        description="x (B, H, T, D), float64 tables",
    ),
    values(
        "apply_rope with float32 tables",
        "apply_rope",
        lambda d: rope_case(d, table_dtype=torch.float32),
        cases=3,
    ),
    values(
        "tables then rotation",
        end_to_end,
        end_to_end_case,
        expect=trusted_end_to_end,
        dtypes=("float32", "float64"),
        cases=3,
    ),
    shapes(
        "table and output shapes and dtypes",
        end_to_end,
        end_to_end_case,
        dtypes=("float32", "float64"),
    ),
    gradients(
        "gradients through the rotation", "apply_rope", lambda d: rope_case(d, high=4), cases=2
    ),
    prop(
        "scale 1 and alpha 1 give plain RoPE",
        plain_rope_when_unscaled,
        end_to_end_case,
        visible=True,
    ),
    prop(
        "q.k depends only on the distance between positions",
        shift_invariance,
        pairs,
        cases=4,
        visible=True,
    ),
    prop(
        "interpolation divides the positions by scale",
        interpolation_divides_positions,
        lambda d: table_case(d, scale=True),
        cases=3,
    ),
    prop(
        "NTK keeps the fastest pair and slows the slowest by alpha",
        ntk_ends,
        lambda d: table_case(d, alpha=True),
        cases=3,
    ),
    prop("the rotation keeps each vector's norm", norms_preserved, rope_case),
    prop("position 0 leaves x unchanged", position_zero_is_identity, end_to_end_case, cases=2),
    edge(
        "head_dim 4 and a single position",
        end_to_end,
        lambda d: case(
            d.tensor((1, 2, 1, 4)),
            data={"positions": torch.tensor([d.integer(1, 900)]), "scale": 4.0, "alpha": 2.0},
        ),
        expect=trusted_end_to_end,
        cases=2,
    ),
    edge(
        "no positions",
        "rope_tables",
        lambda d: case(torch.zeros(0, dtype=torch.int64), 8, scale=2.0),
        cases=1,
    ),
    nontrivial("the output is not zero", end_to_end, end_to_end_case),
    performance(
        "time against the reference",
        "apply_rope",
        timing_case,
        calls=4,
        description="x of shape (2, 4, 32, 32) with float32 tables; reported with its "
        "spread, not graded in this exercise",
    ),
]
