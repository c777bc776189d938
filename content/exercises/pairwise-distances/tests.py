import torch

from sandbox.grading import (
    api_rule,
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


def two_sets(d, n=None, m=None, dim=None, scale=3.0, offset=0.0):
    n = n if n is not None else d.size(1, 40)
    m = m if m is not None else d.size(1, 40)
    dim = dim if dim is not None else d.size(1, 33)
    x = d.tensor((n, dim), low=-scale, high=scale) + offset
    y = d.tensor((m, dim), low=-scale, high=scale) + offset
    return case(x, y)


def exact(c):
    """The definition, in float64 through the (N, M, D) differences, cast to the dtype."""
    x, y = c.args
    diff = x.double()[:, None, :] - y.double()[None, :, :]
    return (diff * diff).sum(dim=-1).to(x.dtype)


def same_count(d):
    """N = M, so that a transposed norm term still has the right shape."""
    n = d.size(2, 30)
    return two_sets(d, n=n, m=n)


def far_from_origin(d):
    """Clouds of spread 1 around a point a thousand away from the origin."""
    return two_sets(d, scale=1.0, offset=d.choice([1000.0, -1500.0, 800.0]))


def empty_side(d):
    dim = d.size(1, 6)
    if d.case % 2 == 0:
        return two_sets(d, n=0, dim=dim)
    return two_sets(d, m=0, dim=dim)


def one_dim(d):
    return two_sets(d, dim=1, scale=10.0)


def single_points(d):
    return two_sets(d, n=1, m=1)


def with_duplicates(d):
    """y repeats x's rows (shuffled) and adds a few others: many distances exactly 0."""
    n, dim = d.size(8, 48), d.size(4, 24)
    x = d.tensor((n, dim), low=-9, high=9)
    extra = d.tensor((d.size(1, 5), dim), low=-9, high=9)
    y = torch.cat([x[d.permutation(n)], extra])
    return case(x, y)


def never_negative(sol, c):
    x, _ = c.args
    out = sol.call("pairwise_sq_dists", x, x.clone())
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != (x.shape[0], x.shape[0]):
        fail("expected an (N, N) tensor for x against a copy of itself")
    if bool((out < 0).any()):
        fail(f"a squared distance came out negative ({float(out.min()):.3g}): clamp at 0")


def duplicates_never_negative(sol, c):
    x, y = c.args
    out = sol.call("pairwise_sq_dists", x, y)
    if not isinstance(out, torch.Tensor):
        fail(f"expected a tensor, got {type(out).__name__}")
    if bool((out < 0).any()):
        fail(f"a squared distance came out negative ({float(out.min()):.3g}): clamp at 0")


def symmetric_in_swap(sol, c):
    """dist(x, y) is the transpose of dist(y, x)."""
    x, y = c.args
    forward = sol.call("pairwise_sq_dists", x, y)
    backward = sol.call("pairwise_sq_dists", y, x)
    if not isinstance(backward, torch.Tensor):
        fail(f"expected a tensor, got {type(backward).__name__}")
    expect_close(forward, backward.T, "dist(x, y) against dist(y, x).T", scale=4)


def translation_invariant(sol, c):
    """Moving both sets by the same vector changes no distance."""
    x, y = c.args
    shift = torch.linspace(-5, 5, x.shape[1], dtype=x.dtype)
    expect_close(sol.call("pairwise_sq_dists", x + shift, y + shift),
                 sol.call("pairwise_sq_dists", x, y), "distances after a shift", scale=4)


def small(d):
    return two_sets(d, n=d.size(1, 7), m=d.size(1, 7), dim=d.size(1, 5))


def timing_case(d):
    """512 by 512 points in 16 dimensions: one call is a fraction of a millisecond."""
    return two_sets(d, n=512, m=512, dim=16)


DECLARATIONS = [
    values("small point sets", "pairwise_sq_dists", two_sets, visible=True, expect=exact,
           description="against the definition computed in float64"),
    values("float32 and float64", "pairwise_sq_dists", two_sets, cases=4,
           dtypes=("float32", "float64"), expect=exact),
    values("as many points on each side", "pairwise_sq_dists", same_count, cases=3,
           dtypes=("float32", "float64"), expect=exact),
    shapes("(N, M) in the inputs' dtype", "pairwise_sq_dists", two_sets,
           dtypes=("float32", "float64")),
    gradients("gradients with respect to both sets", "pairwise_sq_dists", small, cases=3),
    edge("points far from the origin", "pairwise_sq_dists", far_from_origin, visible=True,
         expect=exact, cases=3, dtypes=("float32", "float64"),
         description="coordinates near 1000 with a spread of 1: the expansion must not cancel"),
    edge("far from the origin, larger sets", "pairwise_sq_dists",
         lambda d: two_sets(d, n=d.size(8, 40), m=d.size(8, 40), dim=d.size(4, 20), scale=2.0,
                            offset=d.choice([-900.0, 1200.0, 2000.0])),
         expect=exact, cases=3),
    edge("an empty side", "pairwise_sq_dists", empty_side, expect=exact, cases=2),
    edge("one dimension", "pairwise_sq_dists", one_dim, expect=exact, cases=2),
    edge("one point on each side", "pairwise_sq_dists", single_points, expect=exact, cases=2),
    edge("repeated points", "pairwise_sq_dists", with_duplicates, expect=exact, cases=3),
    prop("a set against a copy of itself is never negative", never_negative,
         lambda d: two_sets(d, n=d.size(24, 64), dim=d.size(8, 24), scale=9.0), cases=3),
    prop("repeated points give no negative distance", duplicates_never_negative,
         with_duplicates, cases=3),
    prop("swapping x and y transposes the matrix", symmetric_in_swap, two_sets, cases=2),
    prop("shifting both sets changes nothing", translation_invariant, two_sets, cases=2,
         dtypes=("float64",)),
    nontrivial("the distances are not zero", "pairwise_sq_dists", two_sets),
    performance("time against the reference", "pairwise_sq_dists", timing_case,
                description="512 x 512 points in 16 dimensions; graded: at most 3x the "
                "reference's time"),
    api_rule("computes the distances itself", visible=True,
             description="no torch.cdist, pdist or pairwise_distance"),
]
