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

NEG = float("-inf")


def draw_blocks(d, *, rows=None, masked=False, scale=3.0, empty=False, center=0.0):
    """A list of (R, C_i) blocks of drawn widths, values within `scale` of `center`.
    `masked`: some whole blocks of some rows, and a few single entries, are -inf (the first
    row is -inf everywhere on later cases). `empty`: some blocks have no columns."""
    r = d.size(1, 8) if rows is None else rows
    n = d.integer(1, 6) if d.case != 1 else d.integer(3, 6)
    widths = [d.integer(0 if empty else 1, 9) for _ in range(n)]
    if empty and d.case >= 1:
        widths[d.integer(0, n - 1)] = 0
    if sum(widths) == 0:
        widths[-1] = 1
    blocks = [d.tensor((r, w), low=center - scale, high=center + scale) for w in widths]
    if masked:
        for b in blocks:
            hidden = d.integers((r,), 0, 2) == 0  # rows for which this block is all -inf
            b[hidden] = NEG
            b[d.integers(b.shape, 0, 5) == 0] = NEG
        if d.case >= 1 and r > 1:
            for b in blocks:
                b[0] = NEG
    return blocks


def state_and_block(d, *, masked=False, scale=3.0):
    """A running state (m, l) that a finite row could have, and a next block."""
    r, c = d.size(1, 8), d.size(1, 9)
    m = d.tensor((r,), low=-scale, high=scale)
    l = d.tensor((r,), low=1.0, high=6.0)
    block = d.tensor((r, c), low=-scale, high=scale)
    if masked:
        m[0] = NEG
        l[0] = 0.0
        block[d.integers((r, c), 0, 3) == 0] = NEG
    return case(m, l, block)


def two_states(d, *, masked=False):
    """Two states of the same R rows over disjoint columns (the second with -inf rows when
    `masked`: an empty state combined with a finite one)."""
    m_a, l_a, _ = state_and_block(d).args
    r = m_a.shape[0]
    m_b, l_b = d.tensor((r,), low=-3, high=3), d.tensor((r,), low=1.0, high=6.0)
    if masked:
        m_b[: (r + 1) // 2], l_b[: (r + 1) // 2] = NEG, 0.0
        m_a[r // 2 :], l_a[r // 2 :] = NEG, 0.0
    return case(m_a, l_a, m_b, l_b)


def trusted_state(columns):
    """(m, l) of a whole row in float64: its maximum and sum(exp(x - max)), 0 for no value."""
    x = columns.double()
    m = x.amax(dim=-1) if x.shape[-1] else torch.full(x.shape[:-1], NEG, dtype=torch.float64)
    shift = torch.where(torch.isneginf(m), torch.zeros_like(m), m)
    return m, torch.exp(x - shift[:, None]).sum(dim=-1)


def row_of(blocks):
    return torch.cat([b.double() for b in blocks], dim=-1)


def pair(value, where):
    if not (isinstance(value, (tuple, list)) and len(value) == 2):
        fail(f"{where}: expected a pair (m, l), got {type(value).__name__}")
    return value


def empty_state(blocks):
    r = blocks[0].shape[0]
    dtype = blocks[0].dtype
    return torch.full((r,), NEG, dtype=dtype), torch.zeros(r, dtype=dtype)


def fold_one_block_at_a_time(sol, c):
    (blocks,) = c.args
    m, l = empty_state(blocks)
    for k, block in enumerate(blocks):
        m, l = pair(sol.call("online_softmax_update", m, l, block), f"update {k + 1}")
    want_m, want_l = trusted_state(row_of(blocks))
    expect_close(m, want_m.to(m.dtype), "m after every block, one call per block")
    expect_close(l, want_l.to(l.dtype), "l after every block, one call per block")


def any_tree_order(sol, c):
    """Each block's own state from the empty one, then combined in a random tree order."""
    (blocks,) = c.args
    states = []
    for k, block in enumerate(blocks):
        m, l = empty_state(blocks)
        states.append(pair(sol.call("online_softmax_update", m, l, block), f"block {k + 1}"))
    gen = torch.Generator().manual_seed(sum(b.shape[-1] for b in blocks) + len(blocks))
    spans = [(k, k) for k in range(len(blocks))]
    while len(states) > 1:
        k = int(torch.randint(len(states) - 1, (1,), generator=gen))
        (ma, la), (mb, lb) = states[k], states[k + 1]
        merged = pair(sol.call("online_softmax_combine", ma, la, mb, lb), "combine")
        states[k : k + 2] = [merged]
        spans[k : k + 2] = [(spans[k][0], spans[k + 1][1])]
    m, l = states[0]
    want_m, want_l = trusted_state(row_of(blocks))
    expect_close(m, want_m.to(m.dtype), "m after combining the blocks' states in a tree")
    expect_close(l, want_l.to(l.dtype), "l after combining the blocks' states in a tree")


def combine_with_empty_is_identity(sol, c):
    m, l, _ = c.args
    em, el = torch.full_like(m, NEG), torch.zeros_like(l)
    for where, args in (("empty first", (em, el, m, l)), ("empty second", (m, l, em, el))):
        got_m, got_l = pair(sol.call("online_softmax_combine", *args), where)
        expect_close(got_m, m, f"m combined with the empty state ({where})")
        expect_close(got_l, l, f"l combined with the empty state ({where})")


def logsumexp_matches_float64(sol, c):
    (blocks,) = c.args
    got = sol.call("online_logsumexp", blocks)
    want = torch.logsumexp(row_of(blocks), dim=-1).to(blocks[0].dtype)
    if not isinstance(got, torch.Tensor) or got.shape != want.shape:
        fail(f"online_logsumexp: expected a tensor of shape {tuple(want.shape)}")
    expect_close(got, want, "logsumexp against float64 over the whole row")


def probs_sum_to_one(sol, c):
    (blocks,) = c.args
    m, l = empty_state(blocks)
    for block in blocks:
        m, l = pair(sol.call("online_softmax_update", m, l, block), "update")
    total = torch.zeros(blocks[0].shape[0], dtype=torch.float64)
    for block in blocks:
        p = sol.call("online_softmax_probs", m, l, block)
        if not isinstance(p, torch.Tensor) or p.shape != block.shape:
            fail(f"online_softmax_probs: expected a tensor of shape {tuple(block.shape)}")
        total += p.double().sum(dim=-1)
    expect_close(total, torch.ones_like(total), "each row's probabilities summed over blocks")


def probs_case(d, *, masked=False):
    """The final state of a drawn row (computed here in float64) and one of its blocks."""
    blocks = draw_blocks(d, masked=masked)
    m, l = trusted_state(row_of(blocks))
    block = blocks[d.integer(0, len(blocks) - 1)]
    return case(m.to(block.dtype), l.to(block.dtype), block)


def timing_case(d):
    """Eight blocks of 64 rows and 32 columns, for the performance test."""
    return case([d.tensor((64, 32)) for _ in range(8)])


DECLARATIONS = [
    values(
        "one update",
        "online_softmax_update",
        state_and_block,
        visible=True,
        description="a running (m, l) and one (R, C) block",
    ),
    values(
        "logsumexp of a stream of blocks",
        "online_logsumexp",
        lambda d: case(draw_blocks(d)),
        visible=True,
        description="blocks of different widths",
    ),
    values(
        "combining two states",
        "online_softmax_combine",
        two_states,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    edge(
        "combining with empty states",
        "online_softmax_combine",
        lambda d: two_states(d, masked=True),
        cases=3,
    ),
    values(
        "probabilities of a block",
        "online_softmax_probs",
        probs_case,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    values(
        "logsumexp, float32 and float64",
        "online_logsumexp",
        lambda d: case(draw_blocks(d)),
        cases=4,
        dtypes=("float32", "float64"),
    ),
    shapes(
        "shapes and dtypes", "online_softmax_update", state_and_block, dtypes=("float32", "float64")
    ),
    gradients(
        "gradients of the logsumexp",
        "online_logsumexp",
        lambda d: case(draw_blocks(d, rows=d.size(1, 4))),
        cases=3,
    ),
    gradients("gradients of an update", "online_softmax_update", state_and_block, cases=3),
    prop(
        "one block per call equals the whole row's statistics",
        fold_one_block_at_a_time,
        lambda d: case(draw_blocks(d, masked=d.case >= 2)),
        cases=5,
        dtypes=("float32", "float64"),
    ),
    prop(
        "states combine in any tree order",
        any_tree_order,
        lambda d: case(draw_blocks(d, masked=d.case >= 2)),
        cases=5,
    ),
    prop(
        "the empty state is the identity of combine",
        combine_with_empty_is_identity,
        lambda d: state_and_block(d, masked=d.case >= 1),
        cases=3,
    ),
    prop(
        "logsumexp equals float64 over the whole row",
        logsumexp_matches_float64,
        lambda d: case(draw_blocks(d, masked=d.case >= 1, empty=True)),
        cases=4,
        dtypes=("float32", "float64"),
    ),
    prop(
        "the probabilities of all blocks sum to one",
        probs_sum_to_one,
        lambda d: case(draw_blocks(d, empty=True)),
        cases=3,
    ),
    edge(
        "blocks that are entirely -inf",
        "online_logsumexp",
        lambda d: case(draw_blocks(d, masked=True)),
        cases=3,
        description="fully masked blocks leave the state alone; no NaN",
    ),
    edge(
        "an update from the empty state, with -inf entries",
        "online_softmax_update",
        lambda d: state_and_block(d, masked=True),
        cases=3,
    ),
    edge(
        "a row that is -inf everywhere",
        "online_logsumexp",
        lambda d: case(
            [
                torch.full((d.size(1, 4), d.size(1, 5)), NEG, dtype=d.dtype)
                for _ in range(d.integer(1, 3))
            ]
        ),
        cases=2,
        description="logsumexp -inf; never NaN",
    ),  # fmt: skip
    edge(
        "probabilities of a row that is -inf everywhere",
        "online_softmax_probs",
        lambda d: probs_case(d, masked=True),
        cases=3,
    ),
    edge(
        "blocks with no columns",
        "online_logsumexp",
        lambda d: case(draw_blocks(d, empty=True)),
        cases=3,
    ),
    edge(
        "huge values do not overflow",
        "online_logsumexp",
        lambda d: case(draw_blocks(d, scale=1.0e4, masked=d.case >= 1)),
        cases=3,
        dtypes=("float32", "float64"),
    ),
    edge(
        "rows far below zero",
        "online_logsumexp",
        lambda d: case(draw_blocks(d, center=-500.0, masked=d.case >= 1)),
        cases=2,
        dtypes=("float32", "float64"),
        description="exp(x) underflows to 0 for every x here; exp(x - max) does not",
    ),
    edge(
        "an update with huge values",
        "online_softmax_update",
        lambda d: state_and_block(d, scale=1.0e4),
        cases=2,
        dtypes=("float32", "float64"),
    ),
    nontrivial("the logsumexp is not zero", "online_logsumexp", lambda d: case(draw_blocks(d))),
    performance(
        "time against the reference",
        "online_logsumexp",
        timing_case,
        description="reported with its spread; not graded in this exercise",
    ),
    api_rule(
        "keeps the statistics itself",
        visible=True,
        description="no built-in logsumexp or softmax, no gluing the blocks together",
    ),
]
