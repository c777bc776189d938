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
    trajectory,
    values,
)


def problem(d, *, gqa=True, share=False, junk=False, boundary=False, lens=None, block=None,
            high=40, spare=None, room=None, fixed=None):  # fmt: skip
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
    if fixed:
        kv_heads, heads, dim = fixed
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
    max_blocks = max(counts) + (d.integer(0, 2) if room is None else room)
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


def growing(d, *, steps=None, zero=False):
    """A paged batch with room to grow (free blocks and table columns for every step), its
    free list in a drawn order, and the queries and new keys and values of each step."""
    block_size = d.choice((2, 3, 4))
    steps = steps or d.integer(1, 7)
    batch = d.size(1, 4)
    lens = d.integers((batch,), 0 if zero else 1, 14)
    if zero:
        lens[d.integer(0, batch - 1)] = 0  # a sequence with no token yet
    grow = steps // block_size + 1
    c = problem(d, lens=lens, block=block_size, spare=batch * grow, room=grow, junk=True,
                share=bool(d.integer(0, 1)))  # fmt: skip
    q, k_cache, v_cache, tables, lens = c.args
    taken = {int(tables[b, j]) for b, n in enumerate(lens.tolist())
             for j in range((n + block_size - 1) // block_size)}  # fmt: skip
    free = [blk for blk in d.permutation(k_cache.shape[0]) if blk not in taken]
    kv_heads, dim = k_cache.shape[2], k_cache.shape[3]
    return case(tables, lens, torch.tensor(free, dtype=torch.int64), block_size, data={
        "caches": (k_cache, v_cache),
        "q": d.tensor((steps, batch, q.shape[1], dim)),
        "k": d.tensor((steps, batch, kv_heads, dim)),
        "v": d.tensor((steps, batch, kv_heads, dim)),
    })  # fmt: skip


def decode(sol, c):
    """Each step: the learner's append_slots says where the new keys and values go, the
    test writes them there, and the learner's paged_attention attends with the new lengths."""
    tables, lens, free, block_size = c.args
    k_cache, v_cache = (t.clone() for t in c.data["caches"])
    flat_k = k_cache.view(-1, *k_cache.shape[2:])
    flat_v = v_cache.view(-1, *v_cache.shape[2:])
    outs = []
    for t in range(c.data["q"].shape[0]):
        answer = sol.call("append_slots", tables, lens, free, block_size)
        if not isinstance(answer, (tuple, list)) or len(answer) != 2:
            fail("append_slots should return (new_tables, slot_mapping)")
        tables = shaped(answer[0], tables.shape, "new_tables")
        slots = shaped(answer[1], lens.shape, "slot_mapping")
        if slots.dtype != torch.int64 or bool(((slots < 0) | (slots >= len(flat_k))).any()):
            fail(f"slot_mapping should hold int64 slots in 0 .. {len(flat_k) - 1}, got {slots}")
        flat_k[slots] = c.data["k"][t]
        flat_v[slots] = c.data["v"][t]
        free = free[int((lens % block_size == 0).sum()) :]
        lens = lens + 1
        outs.append(sol.call("paged_attention", c.data["q"][t], k_cache, v_cache, tables, lens))
    return outs


def attend(q, keys, vals):
    """q (H, D) over keys and values (n, Hkv, D), float64."""
    heads, dim = q.shape
    group = heads // keys.shape[1]
    k = keys.repeat_interleave(group, dim=1).transpose(0, 1)  # (H, n, D)
    v = vals.repeat_interleave(group, dim=1).transpose(0, 1)
    w = torch.softmax((k @ q.to(torch.float64)[:, :, None])[..., 0] / math.sqrt(dim), dim=1)
    return (w[:, None, :] @ v)[:, 0]


def decode_dense(c):
    """Trusted: each sequence's history (its tokens in the cache, then the new ones) as a
    plain list, attended densely."""
    tables, lens = c.args[:2]
    k_cache, v_cache = c.data["caches"]
    first = case(c.data["q"][0], k_cache, v_cache, tables, lens.clamp(min=1))
    history = [(keys[:n], vals[:n]) for (keys, vals), n in zip(gather(first), lens.tolist(),
                                                               strict=True)]  # fmt: skip
    outs = []
    for t in range(c.data["q"].shape[0]):
        step = []
        for b, (keys, vals) in enumerate(history):
            keys = torch.cat([keys, c.data["k"][t, b, None].to(torch.float64)])
            vals = torch.cat([vals, c.data["v"][t, b, None].to(torch.float64)])
            history[b] = (keys, vals)
            step.append(attend(c.data["q"][t, b], keys, vals))
        outs.append(torch.stack(step).to(c.data["q"].dtype))
    return outs


def timing_case(d):
    """8 sequences of 48 to 128 tokens, 16-token blocks, 8 query heads over 2 kv heads of
    64 features."""
    lens = d.integers((8,), 48, 129)
    return problem(d, lens=lens, block=16, fixed=(2, 8, 64))


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
    values(
        "append_slots",
        "append_slots",
        growing,
        visible=True,
        cases=4,
        description="a batch in a paged cache and its free list",
    ),
    edge(
        "append_slots for a sequence with no token yet",
        "append_slots",
        lambda d: growing(d, zero=True),
        cases=2,
    ),
    trajectory(
        "decoding steps: append_slots then paged_attention",
        decode,
        growing,
        expect=decode_dense,
        cases=4,
        dtypes=("float32", "float64"),
        description="the new keys and values written at your slots, then attention",
    ),
    nontrivial("the output is not zero", "paged_attention", problem),
    performance(
        "time against the reference",
        "paged_attention",
        timing_case,
        calls=4,
        description="8 sequences of 48 to 128 tokens in 16-token blocks, 8 query "
        "heads over 2 kv heads; reported with its spread, not graded in this "
        "exercise",
    ),
]
