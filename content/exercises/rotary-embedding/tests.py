import torch

from sandbox.grading import case, edge, expect_close, fail, gradients, nontrivial, performance, prop
from sandbox.grading import shapes, values


def problem(d, *, given=False, far=False, base=False, high=12):
    """x of shape (batch, heads, L, d); with `given`, explicit positions (an offset run, as
    when decoding after a prefix, or any positions); with `far`, positions in the thousands."""
    dim = 2 * d.size(1, 8)
    length = d.size(1, high)
    x = d.tensor((d.size(1, 3), d.size(1, 3), length, dim))
    kwargs = {}
    if given or far:
        top = 5000 if far else 64
        if d.random.random() < 0.5:
            kwargs["positions"] = d.integer(1, top) + torch.arange(length)
        else:
            kwargs["positions"] = d.integers((length,), 0, top)
    if base:
        # A base other than the default, on at least two frequencies (with d = 2 the only
        # frequency is base ** 0 = 1, whatever the base) and a position other than 0.
        kwargs["base"] = d.choice([100.0, 500.0, 2000.0])
        x = d.tensor((x.shape[0], x.shape[1], length, max(dim, 4)))
        kwargs["positions"] = 1 + kwargs["positions"]
    return case(x, **kwargs)


def base_matters(c):
    """The base changes the answer: not the default, two frequencies or more, a position > 0."""
    x, positions = c.args[0], c.kwargs["positions"]
    return c.kwargs["base"] != 10000.0 and x.shape[-1] >= 4 and bool((positions > 0).any())


def pairs(d):
    """Rows of queries and keys, each at its own position, and a shift."""
    n, dim = d.size(1, 9), 2 * d.size(1, 8)
    return case(data={
        "q": d.tensor((n, dim)), "k": d.tensor((n, dim)),
        "pq": d.integers((n,), 0, 50), "pk": d.integers((n,), 0, 50),
        "shift": d.integer(1, 40),
    })  # fmt: skip


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def scores_depend_on_distance(sol, c):
    q, k, pq, pk, s = (c.data[key] for key in ("q", "k", "pq", "pk", "shift"))

    def dots(a, b):
        rq = shaped(sol.call("apply_rope", q, positions=a), q.shape, "rotated queries")
        rk = shaped(sol.call("apply_rope", k, positions=b), k.shape, "rotated keys")
        return (rq * rk).sum(-1)

    expect_close(dots(pq + s, pk + s), dots(pq, pk), f"q.k with both positions moved by {s}",
                 scale=10)


def position_zero_is_identity(sol, c):
    (x,) = c.args
    zeros = torch.zeros(x.shape[-2], dtype=torch.int64)
    expect_close(sol.call("apply_rope", x, positions=zeros), x, "x at position 0")


def norms_preserved(sol, c):
    (x,) = c.args
    out = shaped(sol.call("apply_rope", x, **c.kwargs), x.shape, "output")
    expect_close(out.norm(dim=-1), x.norm(dim=-1), "the norm of each rotated vector", scale=10)


def timing_case(d):
    """x of shape (2, 4, 32, 32), default positions, for the performance test."""
    return case(d.tensor((2, 4, 32, 32)))


DECLARATIONS = [
    values("positions 0..L-1", "apply_rope", problem, visible=True,
           description="x of shape (batch, heads, L, d), default positions"),
    values("explicit positions", "apply_rope", lambda d: problem(d, given=True), cases=4),
    values("other bases", "apply_rope", lambda d: problem(d, given=True, base=True), cases=3,
           guarantee=base_matters),
    values("far positions in float64", "apply_rope", lambda d: problem(d, far=True),
           dtypes=("float64",), cases=3),
    shapes("same shape and dtype", "apply_rope", lambda d: problem(d, given=True),
           dtypes=("float32", "float64")),
    gradients("gradients through the rotation", "apply_rope",
              lambda d: problem(d, given=True, high=4), cases=2),
    prop("q.k depends only on the distance between positions", scores_depend_on_distance,
         pairs, cases=4, visible=True),
    prop("position 0 leaves x unchanged", position_zero_is_identity, problem, cases=2),
    prop("the rotation keeps each vector's norm", norms_preserved,
         lambda d: problem(d, given=True)),
    edge("d = 2 and a single position", "apply_rope",
         lambda d: case(d.tensor((2, 1, 2)), positions=torch.tensor([d.integer(0, 30)])),
         cases=2),
    nontrivial("the output is not zero", "apply_rope", lambda d: problem(d, given=True)),
    performance("time against the reference", "apply_rope", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
]
