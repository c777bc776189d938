import math

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


def problem(d, *, gqa=True, share=False, junk=False, boundary=False, lens=None, block=None,
            high=40, spare=None):  # fmt: skip
    """A batch of sequences in a paged cache: the blocks of each sequence at drawn physical
    places, padding entries in the tables, spare blocks nobody uses.

    share: the first blocks of every sequence are the same physical blocks (a shared prompt).
    junk: padding entries hold out-of-range numbers instead of -1, and every slot no sequence
    uses holds NaN or inf. boundary: every length a multiple of the block size."""
    block_size = block or d.choice((2, 3, 4, 8))
    batch = d.size(1, 4)
    kv_heads = d.choice((1, 2)) if gqa else d.choice((1, 2, 3))
    heads = kv_heads * (d.choice((1, 2, 3)) if gqa else 1)
    dim = d.size(1, 10)
    if lens is None:
        lens = d.integers((batch,), 1, high + 1)
        if boundary:
            lens = block_size * ((lens + block_size - 1) // block_size)
    lens = torch.as_tensor(lens, dtype=torch.int64)
    batch = lens.shape[0]
    counts = [(int(n) + block_size - 1) // block_size for n in lens]
    shared = 0
    if share:
        full = min(int(n) // block_size for n in lens)
        shared = d.integer(1, full) if full >= 1 else 0
    needed = shared + sum(c - shared for c in counts)
    num_blocks = needed + (d.integer(0, 3) if spare is None else spare)
    places = d.permutation(num_blocks)
    prefix = places[:shared]
    free = places[shared:]
    max_blocks = max(counts) + d.integer(0, 2)
    tables = torch.full((batch, max_blocks), -1, dtype=torch.int64)
    for b, c in enumerate(counts):
        own = [free.pop() for _ in range(c - shared)]
        tables[b, :c] = torch.tensor(prefix + own, dtype=torch.int64)
        if junk:
            for j in range(c, max_blocks):
                tables[b, j] = d.choice((num_blocks, num_blocks + 7, 10**6, -3, -1))
    shape = (num_blocks, block_size, kv_heads, dim)
    k_cache, v_cache = d.tensor(shape), d.tensor(shape)
    if junk:
        used = torch.zeros(num_blocks, block_size, dtype=torch.bool)
        for b, n in enumerate(lens.tolist()):
            for i in range(n):
                used[tables[b, i // block_size], i % block_size] = True
        k_cache[~used] = float("nan")
        v_cache[~used] = d.choice((float("nan"), float("inf")))
    return case(d.tensor((batch, heads, dim)), k_cache, v_cache, tables, lens)


def gather(c):
    """Each sequence's keys and values, read token by token through its table (float64)."""
    _, k_cache, v_cache, tables, lens = c.args
    block_size = k_cache.shape[1]
    out = []
    for b, n in enumerate(lens.tolist()):
        at = [(int(tables[b, i // block_size]), i % block_size) for i in range(n)]
        keys = torch.stack([k_cache[blk, s] for blk, s in at]).to(torch.float64)
        vals = torch.stack([v_cache[blk, s] for blk, s in at]).to(torch.float64)
        out.append((keys, vals))  # (n, Hkv, D) each
    return out


def dense(c):
    """Trusted: ordinary attention of each query head over its kv head's gathered tokens."""
    q = c.args[0]
    heads, dim = q.shape[1], q.shape[2]
    rows = []
    for b, (keys, vals) in enumerate(gather(c)):
        group = heads // keys.shape[1]
        per_head = []
        for h in range(heads):
            k, v = keys[:, h // group], vals[:, h // group]  # (n, D)
            w = torch.softmax(k @ q[b, h].to(torch.float64) / math.sqrt(dim), dim=0)
            per_head.append(w @ v)
        rows.append(torch.stack(per_head))
    return torch.stack(rows).to(q.dtype)


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def blocks_relabelled(sol, c):
    """Moving the physical blocks around (and the tables with them) changes nothing."""
    q, k_cache, v_cache, tables, lens = c.args
    n = k_cache.shape[0]
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(n * 7919 + 1))
    new_place = torch.empty_like(perm)
    new_place[perm] = torch.arange(n)  # old block perm[j] moves to place j
    block_size = k_cache.shape[1]
    moved = tables.clone()
    for b, length in enumerate(lens.tolist()):
        used = (length + block_size - 1) // block_size
        moved[b, :used] = new_place[tables[b, :used]]
    before = shaped(sol.call("paged_attention", *c.args), q.shape, "output")
    after = sol.call("paged_attention", q, k_cache[perm], v_cache[perm], moved, lens)
    expect_close(shaped(after, q.shape, "output after moving the blocks"), before,
                 "the output once the physical blocks are relabelled")  # fmt: skip


def sequences_independent(sol, c):
    """Each sequence's output is what it gets alone in a batch of one."""
    q, k_cache, v_cache, tables, lens = c.args
    whole = shaped(sol.call("paged_attention", *c.args), q.shape, "output")
    for b in range(q.shape[0]):
        alone = sol.call("paged_attention", q[b : b + 1], k_cache, v_cache,
                         tables[b : b + 1], lens[b : b + 1])  # fmt: skip
        expect_close(shaped(alone, q[b : b + 1].shape, f"sequence {b} alone")[0], whole[b],
                     f"sequence {b} alone against its row of the batch")  # fmt: skip


def one_token(d):
    """Every sequence holds a single token."""
    batch = d.size(1, 4)
    return problem(d, lens=[1] * batch, junk=True)


def two_blocks(d):
    """A cache of exactly two blocks: a sequence over both, beside one that shares its first
    block and has no other (the second has padding where the first has a block)."""
    lens = [d.integer(5, 8), 4]
    if d.integer(0, 1):
        lens.reverse()
    return problem(d, lens=lens, block=4, spare=0, share=True, junk=True)


def timing_case(d):
    """8 sequences of 100 to 256 tokens, 16-token blocks, 8 query heads over 2 kv heads of
    64 features."""
    lens = d.integers((8,), 100, 257)
    return problem(d, lens=lens, block=16)


DECLARATIONS = [
    values(
        "one head per kv head, -1 padding",
        "paged_attention",
        lambda d: problem(d, gqa=False),
        expect=dense,
        visible=True,
        description="blocks scattered in the cache, padding entries of -1",
    ),
    values(
        "grouped-query heads",
        "paged_attention",
        problem,
        expect=dense,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    values(
        "blocks shared between sequences",
        "paged_attention",
        lambda d: problem(d, share=True),
        expect=dense,
        visible=True,
        cases=3,
        description="the first blocks of every sequence are the same physical blocks",
    ),
    values(
        "out-of-range padding and NaN in unused slots",
        "paged_attention",
        lambda d: problem(d, junk=True, share=True),
        expect=dense,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    values(
        "against the reference in float64",
        "paged_attention",
        lambda d: problem(d, junk=True),
        dtypes=("float64",),
        cases=3,
    ),
    shapes("output shape and dtype", "paged_attention", problem, dtypes=("float32", "float64")),
    prop(
        "relabelling the physical blocks changes nothing",
        blocks_relabelled,
        lambda d: problem(d, share=True),
        cases=3,
    ),
    prop(
        "each sequence is independent of the batch",
        sequences_independent,
        lambda d: problem(d, junk=True),
        cases=3,
    ),
    edge(
        "sequences ending exactly at a block boundary",
        "paged_attention",
        lambda d: problem(d, boundary=True, junk=True),
        expect=dense,
        cases=3,
    ),
    edge("one token per sequence", "paged_attention", one_token, expect=dense, cases=2),
    edge(
        "blocks of one slot",
        "paged_attention",
        lambda d: problem(d, block=1, junk=True, high=9),
        expect=dense,
        cases=2,
    ),
    edge("a cache of two blocks", "paged_attention", two_blocks, expect=dense, cases=2),
    nontrivial("the output is not zero", "paged_attention", problem),
    performance(
        "time against the reference",
        "paged_attention",
        timing_case,
        calls=4,
        description="8 sequences of 100 to 256 tokens in 16-token blocks, 8 query "
        "heads over 2 kv heads; reported with its spread, not graded in this "
        "exercise",
    ),
]
