import torch

from sandbox.grading import (
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


def weight(d, *, high=6, group=None, zero_groups=False, positive=False):
    """w of shape (out, groups * group_size), values of an nn.Linear's scale or wider."""
    group_size = group or d.choice((2, 4, 8, 16, 32))
    rows = d.size(1, 9)
    w = d.tensor((rows, d.size(1, high) * group_size), low=-2, high=2)
    if positive:
        w = w.abs() + 0.25  # a group with no negative weight: the range is widened to 0
    if zero_groups:
        flat = w.view(rows, -1, group_size)
        for _ in range(d.integer(1, 3)):
            flat[d.integer(0, rows - 1), d.integer(0, flat.shape[1] - 1)] = 0.0
    return case(w, group_size)


def exact_ties(d):
    """Groups spanning exactly [-8/16, 7/16] (row 0: [-15/32, 15/32]), scale 1/16, with
    weights on the grid and halfway between grid points (1/32 among them, in every group):
    torch.round sends halves to the even code."""
    rows, groups, group_size = d.size(1, 5), d.size(1, 3), d.choice((4, 8))
    halves = d.integers((rows, groups, group_size), -15, 15).to(d.dtype) / 32
    halves[..., 0], halves[..., 1], halves[..., 2] = -0.5, 7 / 16, 1 / 32
    # Row 0 spans [-15/32, 15/32]: zero point round(7.5) = 8, and its top weight rounds to
    # 8 + 8 = 16 before the clamp to 15.
    halves[0, :, 0], halves[0, :, 1] = -15 / 32, 15 / 32
    return case(halves.reshape(rows, groups * group_size), group_size)


def trusted_codes(w, group_size):
    """The statement's recipe one group at a time, in w's dtype; codes (out, in) as int64."""
    rows, cols = w.shape
    codes = torch.zeros(rows, cols, dtype=torch.int64)
    scales = torch.zeros(rows, cols // group_size, dtype=w.dtype)
    zeros = torch.zeros(rows, cols // group_size, dtype=torch.int64)
    for r in range(rows):
        for g in range(cols // group_size):
            part = w[r, g * group_size : (g + 1) * group_size]
            lo, hi = min(part.min(), torch.zeros((), dtype=w.dtype)), max(part.max(), 0)
            scale = (hi - lo) / 15
            scales[r, g] = scale if scale > 0 else 1.0
            if scale == 0:
                continue
            zero = int(torch.round(-lo / scale).clamp(0, 15))
            zeros[r, g] = zero
            q = torch.round(part / scale).to(torch.int64) + zero
            codes[r, g * group_size : (g + 1) * group_size] = q.clamp(0, 15)
    return codes, scales, zeros


def trusted_quantize(c):
    w, group_size = c.args
    codes, scales, zeros = trusted_codes(w, group_size)
    packed = codes[:, 0::2] + 16 * codes[:, 1::2]
    return packed.to(torch.uint8), scales, zeros.to(torch.uint8)


def stored(d):
    """Packed bytes, scales and zero points as a checkpoint would hold them."""
    group_size = d.choice((2, 4, 8, 16))
    rows, groups = d.size(1, 9), d.size(1, 6)
    packed = d.integers((rows, groups * group_size // 2), 0, 256).to(torch.uint8)
    scales = d.tensor((rows, groups), low=0.001, high=0.2)
    zeros = d.integers((rows, groups), 0, 16).to(torch.uint8)
    return case(packed, scales, zeros, group_size)


def trusted_dequantize(c):
    packed, scales, zeros, group_size = c.args
    rows = packed.shape[0]
    out = torch.zeros(rows, 2 * packed.shape[1], dtype=torch.float64)
    for r in range(rows):
        for j, byte in enumerate(packed[r].tolist()):
            for col, code in ((2 * j, byte % 16), (2 * j + 1, byte // 16)):
                g = col // group_size
                out[r, col] = (code - int(zeros[r, g])) * float(scales[r, g])
    return out.to(scales.dtype)


def answer(value, where):
    if not isinstance(value, (tuple, list)) or len(value) != 3:
        fail(f"{where}: quantize should return (packed, scales, zeros)")
    return value


def shaped(value, shape, where, dtype=None):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    if dtype is not None and value.dtype != dtype:
        fail(f"{where}: expected dtype {dtype}, got {value.dtype}")
    return value


def round_trip(sol, c):
    """Every weight comes back within half its group's scale (the rounding error)."""
    w, group_size = c.args
    rows, cols = w.shape
    packed, scales, zeros = answer(sol.call("quantize", w, group_size), "quantize")
    groups = (rows, cols // group_size)
    shaped(scales, groups, "scales")
    back = sol.call("dequantize", packed, scales, zeros, group_size)
    back = shaped(back, w.shape, "dequantize(quantize(w))")
    bound = scales.to(torch.float64).repeat_interleave(group_size, dim=1) / 2
    err = (back.to(torch.float64) - w.to(torch.float64)).abs()
    slack = 1e-6 * w.abs().to(torch.float64) + 1e-12
    if bool((err > bound + slack).any()):
        r, k = divmod(int((err - bound).argmax()), cols)
        fail(f"dequantize(quantize(w)) is {float(err[r, k]):.4g} from w at ({r}, {k}), "
             f"more than half the group's scale ({float(bound[r, k]):.4g})")  # fmt: skip


def codes_span_the_grid(sol, c):
    """The smallest weight of a group maps to code 0 or the largest to 15 (the grid is used
    from one end to the other), and a zero weight comes back exactly 0."""
    w, group_size = c.args
    packed = answer(sol.call("quantize", w, group_size), "quantize")[0]
    packed = shaped(packed, (w.shape[0], w.shape[1] // 2), "packed", torch.uint8)
    codes = torch.stack([packed % 16, packed // 16], dim=-1).flatten(-2).to(torch.int64)
    codes = codes.view(w.shape[0], -1, group_size)
    ends = (codes.amin(-1) == 0) | (codes.amax(-1) == 15)
    if not bool(ends.all()):
        fail("some group uses neither code 0 nor code 15: the scale is not (max - min) / 15")
    w0 = w.clone()
    w0[:, 0] = 0.0
    back = sol.call("dequantize", *sol.call("quantize", w0, group_size), group_size)
    back = shaped(back, w.shape, "dequantize(quantize(w))")
    expect_close(back[:, 0], w0[:, 0], "a weight of 0 after the round trip")


def refuses_bad_groups(sol, c):
    """An even group size that does not divide in, and an odd one that does (1)."""
    w = c.args[0]
    cols = w.shape[1]
    bad = [cols + 2, 1]
    calls = [{"op": "call", "target": "quantize", "args": [w, g], "kwargs": {}} for g in bad]
    for g, (ok, got) in zip(bad, sol.batch(calls), strict=True):
        if ok or not str(got).startswith("ValueError"):
            fail(f"quantize(w with {cols} columns, group_size={g}) should raise ValueError, "
                 f"got {'an answer' if ok else got}")  # fmt: skip


def timing_case(d):
    """w of shape (64, 256), groups of 64."""
    return case(d.tensor((64, 256), low=-0.1, high=0.1), 64)


DECLARATIONS = [
    values(
        "quantize a weight",
        "quantize",
        weight,
        visible=True,
        description="w (out, in) in [-2, 2], groups of 2 to 32 columns",
    ),
    values(
        "quantize against a group-by-group recipe",
        "quantize",
        weight,
        expect=trusted_quantize,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    values(
        "dequantize stored bytes",
        "dequantize",
        stored,
        expect=trusted_dequantize,
        visible=True,
        cases=3,
        description="random bytes, scales and zero points",
    ),
    values(
        "dequantize in float64",
        "dequantize",
        stored,
        expect=trusted_dequantize,
        dtypes=("float64",),
        cases=2,
    ),
    shapes("shapes and dtypes", "quantize", weight, dtypes=("float32", "float64")),
    prop(
        "the round trip is within half a scale",
        round_trip,
        weight,
        cases=4,
        visible=True,
        dtypes=("float32", "float64"),
    ),
    prop("codes span the grid and 0 is exact", codes_span_the_grid, weight, cases=3),
    prop(
        "a group size that is odd or does not divide in is refused",
        refuses_bad_groups,
        weight,
        cases=2,
    ),
    edge("weights halfway between grid points", "quantize", exact_ties, cases=3),
    edge("groups of zeros", "quantize", lambda d: weight(d, zero_groups=True), cases=3),
    edge(
        "groups of zeros round trip",
        lambda sol, c: sol.call("dequantize", *sol.call("quantize", *c.args), c.args[1]),
        lambda d: weight(d, zero_groups=True),
        cases=2,
    ),
    edge("groups with no negative weight", "quantize", lambda d: weight(d, positive=True), cases=2),
    edge("one group of two columns", "quantize", lambda d: weight(d, high=1, group=2), cases=2),
    nontrivial("dequantized weights are not zero", "dequantize", stored),
    performance(
        "time against the reference",
        "quantize",
        timing_case,
        calls=4,
        description="w of shape (64, 256) in groups of 64; reported with its spread, "
        "not graded in this exercise",
    ),
]
