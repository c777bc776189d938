import torch

from sandbox.grading import api_rule, case, edge, expect_close, fail, nontrivial, performance, prop
from sandbox.grading import shapes, values


def batch(d, *, rows=None, low=1):
    """Rows of very different norms around max_norm, so some are clipped and some not."""
    n = rows if rows is not None else d.size(low, 12)
    x = d.tensor((n, d.size(1, 9)), normal=True)
    x = x * torch.exp(d.tensor((n, 1), low=-2.0, high=2.0, dtype=torch.float64)).to(x.dtype)
    return case(x, d.choice([0.5, 1.0, 2.5]))


def exact_and_zero(d):
    """Rows of norm exactly max_norm (3-4-5 triangles), below and above it, and zero rows."""
    k = d.choice([1.0, 2.0, 0.5])
    x = torch.tensor([[3.0, 4.0], [0.0, 0.0], [6.0, 8.0], [0.3, 0.4], [-3.0, 4.0], [0.0, 0.0]],
                     dtype=d.dtype) * k
    order = d.permutation(x.shape[0])
    return case(x[order], 5.0 * k)


def trusted(c):
    """Row by row, in float64, in the grader."""
    x, max_norm = c.args
    out, count = x.double().clone(), 0
    for i in range(x.shape[0]):
        norm = float(torch.linalg.vector_norm(out[i]))
        if norm > max_norm:
            out[i] *= max_norm / norm
            count += 1
    return out.to(x.dtype), torch.tensor(count)


def clipped_rows_have_max_norm(sol, c):
    x, max_norm = c.args
    y, _ = sol.call("clip_rows", x, max_norm)
    norms = torch.linalg.vector_norm(y.double(), dim=1)
    before = torch.linalg.vector_norm(x.double(), dim=1)
    if bool((norms > max_norm * (1 + 1e-5)).any()):
        fail("a row's norm is above max_norm after clipping")
    expect_close(norms, torch.minimum(before, torch.tensor(max_norm, dtype=torch.float64)),
                 "each row's norm after clipping", scale=10)


def idempotent(sol, c):
    x, max_norm = c.args
    once, _ = sol.call("clip_rows", x, max_norm)
    twice, count = sol.call("clip_rows", once, max_norm * (1 + 1e-4))
    expect_close(twice, once, "clipping an already clipped batch")
    if int(count) != 0:
        fail(f"clipping an already clipped batch counted {int(count)} rows")


def timing_case(d):
    """A (128, 64) batch of rows around max_norm, for the performance test."""
    return case(d.tensor((128, 64), normal=True) * 0.2, 1.0)


DECLARATIONS = [
    values("clipped rows and count", "clip_rows", batch, expect=trusted, visible=True,
           cases=3, description="rows of norms on both sides of max_norm"),
    values("float32 and float64 match the reference", "clip_rows", batch, cases=3,
           dtypes=("float32", "float64")),
    edge("rows exactly at max_norm, and zero rows", "clip_rows", exact_and_zero,
         expect=trusted, cases=2, dtypes=("float32", "float64"),
         description="norm equal to max_norm is not clipped; zero rows stay zero"),
    edge("an empty batch", "clip_rows", lambda d: batch(d, rows=0, low=0), expect=trusted,
         cases=1),
    edge("a single row", "clip_rows", lambda d: batch(d, rows=1), expect=trusted, cases=2),
    shapes("a tensor and a 0-dim int64 count", "clip_rows", batch,
           dtypes=("float32", "float64"), cases=2),
    prop("no row ends above max_norm", clipped_rows_have_max_norm, batch, cases=3),
    prop("clipping twice changes nothing", idempotent, batch, cases=2),
    nontrivial("the rows are not zeroed", "clip_rows", batch),
    performance("time against the reference", "clip_rows", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("nothing that breaks the graph", visible=False,
             description="no print, .item(), .tolist(), .numpy() or .cpu()"),
]
