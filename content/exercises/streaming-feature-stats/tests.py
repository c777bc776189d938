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
    values,
)

F64 = torch.float64


def draw_chunks(d, *, count=None, rows=None, features=None, loc=None, scale=None):
    """A dataset in chunks of uneven sizes (some may be empty), features on different
    scales and offsets."""
    features = features if features is not None else d.size(1, 9)
    count = count if count is not None else d.size(1, 6)
    loc = loc if loc is not None else d.tensor((features,), low=-5, high=5, dtype=F64)
    scale = scale if scale is not None else d.tensor((features,), low=0.1, high=3, dtype=F64)
    chunks = []
    for _ in range(count):
        n = rows if rows is not None else d.integer(0, 12)
        x = d.tensor((n, features), normal=True, dtype=F64) * scale + loc
        chunks.append(x.to(d.dtype))
    return chunks


def streamed(d):
    unbiased = d.choice([None, False, True])  # None: left to its default
    return case(draw_chunks(d), **({} if unbiased is None else {"unbiased": unbiased}))


def trusted(c):
    """Everything joined, in float64, in the grader (which has the memory for it)."""
    x = torch.cat([x.to(F64) for x in c.args[0]])
    unbiased = c.kwargs.get("unbiased", False)
    if x.shape[0] == 0:
        nan = torch.full((x.shape[1],), math.nan, dtype=F64)
        return nan, nan.clone()
    dev = x - x.mean(dim=0)
    denominator = x.shape[0] - 1 if unbiased else x.shape[0]
    # 0 / 0 = NaN for one row with the unbiased estimate, as torch.std gives (without its
    # warning).
    return x.mean(dim=0), ((dev * dev).sum(dim=0) / denominator).sqrt()


def trusted_stats(rows):
    """(n, mean, M2) of a float64 tensor of rows, in the grader."""
    if rows.shape[0] == 0:
        return 0, torch.zeros(rows.shape[1], dtype=F64), torch.zeros(rows.shape[1], dtype=F64)
    mean = rows.mean(dim=0)
    return rows.shape[0], mean, ((rows - mean) ** 2).sum(dim=0)


def two_groups(d, *, empty=None):
    """Statistics of two groups of rows, and the rows themselves (for the expected merge)."""
    a, b = draw_chunks(d, count=2, rows=None)
    if empty == "a":
        a = a[:0]
    elif empty == "b":
        b = b[:0]
    elif empty == "both":
        a, b = a[:0], b[:0]
    a, b = a.to(F64), b.to(F64)
    return case(trusted_stats(a), trusted_stats(b), data={"rows": (a, b)})


def merged_rows(c):
    return trusted_stats(torch.cat(c.data["rows"]))


def one_chunk(d):
    return case(draw_chunks(d, count=1, rows=d.size(0, 15))[0])


def chunk_expected(c):
    n, mean, m2 = trusted_stats(c.args[0].to(F64))
    return n, mean, m2


def far_from_zero(d):
    """Values near 1e4 with a spread of 1e-2, in float32: sum(x^2)/N - mean^2 loses every
    digit of the variance (float32), or most of them (float64)."""
    features = d.size(1, 6)
    loc = torch.full((features,), 1.0e4, dtype=F64) + d.tensor((features,), dtype=F64)
    scale = torch.full((features,), 1.0e-2, dtype=F64)
    chunks = draw_chunks(d, count=d.size(3, 6), features=features, loc=loc, scale=scale)
    return case([x.to(torch.float32) for x in chunks], unbiased=d.choice([False, True]))


def order_does_not_matter(sol, c):
    chunks = c.args[0]
    forward = sol.call("stream_stats", chunks, **c.kwargs)
    backward = sol.call("stream_stats", chunks[::-1], **c.kwargs)
    expect_close(list(backward), list(forward), "mean and std with the chunks reversed", scale=10)


def split_does_not_matter(sol, c):
    """The same rows as one chunk or as chunks of one row each."""
    rows = [x for x in c.args[0] if x.shape[0]]
    if not rows:
        return
    whole = sol.call("stream_stats", [torch.cat(rows)], **c.kwargs)
    single = sol.call(
        "stream_stats", [r[i : i + 1] for r in rows for i in range(r.shape[0])], **c.kwargs
    )
    expect_close(list(single), list(whole), "one row per chunk against one chunk", scale=10)


def merge_is_symmetric(sol, c):
    a, b = c.args
    ab = sol.call("merge", a, b)
    ba = sol.call("merge", b, a)
    if ab[0] != ba[0]:
        fail(f"merge(a, b) counts {ab[0]} rows, merge(b, a) {ba[0]}")
    expect_close(list(ba[1:]), list(ab[1:]), "merge(b, a) against merge(a, b)", scale=10)


def one_row_total(d):
    x = d.tensor((1, d.size(1, 7)), dtype=d.dtype, normal=True)
    features = x.shape[1]
    empty = torch.zeros((0, features), dtype=d.dtype)
    return case([empty, x, empty], unbiased=d.choice([False, True]))


def all_empty(d):
    features = d.size(1, 7)
    return case(
        [torch.zeros((0, features), dtype=d.dtype)] * d.size(1, 3), unbiased=d.choice([False, True])
    )


def timing_case(d):
    """Eight chunks of (64, 16) float32, for the performance test."""
    g = torch.Generator().manual_seed(0)
    return case([torch.randn(64, 16, generator=g) for _ in range(8)])


DECLARATIONS = [
    values(
        "mean and std over uneven chunks",
        "stream_stats",
        streamed,
        expect=trusted,
        visible=True,
        cases=3,
        dtypes=("float32", "float64"),
        description="chunks of 0 to 12 rows; population or unbiased std",
    ),
    values("match the reference", "stream_stats", streamed, cases=3),
    values(
        "merge two groups",
        "merge",
        two_groups,
        expect=merged_rows,
        visible=True,
        cases=3,
        description="(count, mean, M2) of the union of the rows",
    ),
    values(
        "chunk statistics",
        "chunk_stats",
        one_chunk,
        expect=chunk_expected,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    edge(
        "values far from zero with a small spread",
        "stream_stats",
        far_from_zero,
        expect=trusted,
        cases=3,
        description="around 1e4 with std 1e-2, float32 input",
    ),
    edge(
        "merge with an empty side",
        "merge",
        lambda d: two_groups(d, empty=d.choice(["a", "b"])),
        expect=merged_rows,
        cases=3,
    ),
    edge(
        "merge two empty sides",
        "merge",
        lambda d: two_groups(d, empty="both"),
        expect=merged_rows,
        cases=1,
    ),
    edge(
        "a single row in total",
        "stream_stats",
        one_row_total,
        expect=trusted,
        cases=3,
        description="population std 0; unbiased std NaN",
    ),
    edge("no rows at all", "stream_stats", all_empty, expect=trusted, cases=2),
    edge(
        "an empty chunk",
        "chunk_stats",
        lambda d: case(draw_chunks(d, count=1, rows=0)[0]),
        expect=chunk_expected,
        cases=1,
    ),
    shapes(
        "(F,) float64 mean and std",
        "stream_stats",
        streamed,
        cases=2,
        dtypes=("float32", "float64"),
    ),
    prop("the order of the chunks does not matter", order_does_not_matter, streamed, cases=3),
    prop("how the rows are split does not matter", split_does_not_matter, streamed, cases=3),
    prop("merge is symmetric", merge_is_symmetric, two_groups, cases=3),
    nontrivial("the std is not zero", "stream_stats", streamed),
    performance(
        "time against the reference",
        "stream_stats",
        timing_case,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
    api_rule(
        "no joining of chunks, no built-in variance",
        visible=True,
        description="no torch.cat / stack, no var / std",
    ),
]
