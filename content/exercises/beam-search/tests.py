import itertools
import math

import torch

from sandbox.grading import case, edge, fail, performance, prop, shapes, values


def trusted_search(first, table, beam_size, max_len, eos_id, alpha):
    """The statement's search in plain Python floats (float64), lists and sorted()."""
    first, table = first.double().tolist(), table.double().tolist()
    vocab = len(first)
    alive, finished = [([], 0.0)], []
    for length in range(1, max_len + 1):
        cands = []
        for rank, (seq, score) in enumerate(alive):
            for tok in range(vocab):
                term = first[tok] if length == 1 else table[seq[-1]][tok]
                cands.append((score + term, rank, tok, [*seq, tok]))
        cands.sort(key=lambda x: (-x[0], x[1], x[2]))
        alive = []
        for score, _, tok, seq in cands[:beam_size]:
            if tok == eos_id or length == max_len:
                finished.append((score / length**alpha, seq))
            else:
                alive.append((seq, score))
        if not alive:
            break
    best = finished[0]
    for item in finished[1:]:
        if item[0] > best[0]:
            best = item
    return best


def packed(tokens, score):
    return [torch.tensor(tokens, dtype=torch.int64), torch.tensor(score, dtype=torch.float64)]


def answer(sol, c, **over):
    """The learner's (tokens, score), checked for types, as [int64 tensor, float64 scalar]."""
    kwargs = c.kwargs | over
    out = sol.call("beam_search", *c.args, **kwargs)
    if not isinstance(out, list | tuple) or len(out) != 2:
        fail(f"beam_search should return (tokens, score), got {type(out).__name__}")
    tokens, score = out
    if not isinstance(tokens, list | tuple) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in tokens
    ):
        fail("tokens should be a list of Python ints")
    if isinstance(score, bool) or not isinstance(score, float | int):
        fail(f"score should be a Python float, got {type(score).__name__}")
    return packed(list(tokens), float(score))


def run(sol, c):
    return answer(sol, c)


def expected(c):
    first, table, beam, max_len, eos = c.args
    score, seq = trusted_search(first, table, beam, max_len, eos, c.kwargs.get("alpha", 0.0))
    return packed(seq, score)


def model(d, vocab, scale=None, dyadic=False):
    """A bigram model: log_softmax of random logits, or small multiples of -1/4 (ties)."""
    if dyadic:
        first = -d.integers((vocab,), 0, 5).to(d.dtype) / 4
        table = -d.integers((vocab, vocab), 0, 5).to(d.dtype) / 4
        return first, table
    s = scale or d.choice([0.5, 1.0, 2.0, 3.0])
    first = torch.log_softmax(d.tensor((vocab,), normal=True) * s, -1)
    table = torch.log_softmax(d.tensor((vocab, vocab), normal=True) * s, -1)
    return first, table


def drawn(d, *, vocab=None, beam=None, max_len=None, alpha=None, dyadic=False, eos=None):
    v = vocab if vocab is not None else d.size(2, 12)
    first, table = model(d, v, dyadic=dyadic)
    b = beam if beam is not None else d.integer(1, 6)
    n = max_len if max_len is not None else d.integer(1, 9)
    e = eos if eos is not None else d.integer(0, v - 1)
    a = alpha if alpha is not None else d.choice([0.0, 0.5, 0.6, 1.0, 1.5])
    return case(first, table, b, n, e, alpha=a)


def exhaustive_case(d):
    """beam_size >= V ** max_len: nothing is pruned."""
    v = d.integer(2, 3)
    n = d.integer(1, 4 if v == 2 else 3)
    return drawn(
        d, vocab=v, beam=v**n + d.integer(0, 3), max_len=n, alpha=d.choice([0.0, 0.7, 1.0])
    )


def exhaustive(c):
    """The best of every sequence ending at its first eos or running to max_len tokens."""
    first, table, _, max_len, eos = c.args
    alpha = c.kwargs["alpha"]
    f, t = first.double().tolist(), table.double().tolist()
    best = None
    for length in range(1, max_len + 1):
        for seq in itertools.product(range(len(f)), repeat=length):
            if eos in seq[:-1] or (seq[-1] != eos and length < max_len):
                continue
            s = f[seq[0]]
            for a, b in itertools.pairwise(seq):
                s += t[a][b]
            s /= length**alpha
            if best is None or s > best[0]:
                best = (s, list(seq))
    return packed(best[1], best[0])


def greedy(c):
    first, table, _, max_len, eos = c.args
    f, t = first.double().tolist(), table.double().tolist()
    seq, s = [], 0.0
    for length in range(1, max_len + 1):
        row = f if length == 1 else t[seq[-1]]
        tok = max(range(len(row)), key=lambda i: (row[i], -i))
        seq.append(tok)
        s += row[tok]
        if tok == eos:
            break
    return packed(seq, s / len(seq) ** c.kwargs["alpha"])


def greedy_case(d):
    return drawn(d, beam=1)


def eos_first(d):
    """The eos token is by far the most likely first token."""
    c = drawn(d, alpha=0.0, beam=d.integer(1, 4))
    first, table, b, n, e = c.args
    first = first.clone()
    first[e] = first.max() + 3
    return case(first, table, b, n, e, alpha=0.0)


def eos_unlikely(d):
    """The eos column is very unlikely: hypotheses are cut at max_len."""
    c = drawn(d, vocab=d.size(2, 8))
    first, table, b, n, e = c.args
    first, table = first.clone(), table.clone()
    first[e] -= 30
    table[:, e] -= 30
    return case(first, table, b, n, e, alpha=c.kwargs["alpha"])


def alpha_pair(d):
    """A model where eos is moderately likely: short and long hypotheses compete."""
    v = d.size(3, 8)
    c = drawn(d, vocab=v, beam=d.integer(2, 5), max_len=d.integer(3, 8))
    first, table, b, n, e = c.args
    table = table.clone()
    table[:, e] += 1.0
    return case(first, table, b, n, e)


def both_alphas(sol, c):
    return answer(sol, c, alpha=0.0) + answer(sol, c, alpha=1.0)


def both_alphas_expected(c):
    out = []
    for a in (0.0, 1.0):
        first, table, b, n, e = c.args
        score, seq = trusted_search(first, table, b, n, e, a)
        out += packed(seq, score)
    return out


def ties(d):
    """Log-probabilities in multiples of 1/4: exact ties everywhere, settled by the rules."""
    small = d.case % 3 == 0
    return drawn(
        d,
        vocab=d.size(2, 6) if small else d.integer(8, 16),
        beam=d.integer(1, 6) if small else d.integer(4, 8),
        dyadic=True,
        alpha=d.choice([0.0, 1.0]),
    )


def wide_beam(d):
    """More beams than tokens: at step 1 there are fewer candidates than beam_size."""
    v = d.size(2, 5)
    return drawn(d, vocab=v, beam=v + d.integer(1, 6), max_len=d.integer(2, 4))


def one_step(d):
    return drawn(d, max_len=1)


def only_eos(d):
    """V = 1: the only token is eos."""
    return drawn(d, vocab=1, eos=0)


def default_alpha(d):
    """alpha left out, on models whose answers are longer than one token (eos made rarer), so
    that any other default would change the score."""
    c = drawn(d, max_len=d.integer(2, 8))
    first, table, b, n, e = c.args
    first, table = first.clone(), table.clone()
    first[e] -= 4
    table[:, e] -= 2
    return case(first, table, b, n, e)


def slots_used(d):
    """A finished hypothesis keeps its slot in the beam: eos is the likeliest first token and
    the next token that the beam has no room for leads to eos almost surely, so with alpha = 1
    a search that refilled the beam after setting eos aside would find [that token, eos]
    (mean log-probability about log(0.14) / 2) where the statement's finds [eos] (log 0.3)."""
    beam = d.integer(2, 3)
    vocab = beam + 3 + d.integer(0, 2)
    roles = d.permutation(vocab)  # roles[0] eos, roles[1:beam] kept, roles[beam] left out
    eos, left_out = roles[0], roles[beam]
    rest = roles[beam + 1 :]
    first = torch.zeros(vocab, dtype=torch.float64)
    first[eos] = 0.3
    for tok in roles[1:beam]:
        first[tok] = 0.3 / (beam - 1)
    first[left_out] = 0.14
    for tok in rest:
        first[tok] = 0.26 / len(rest)
    table = torch.full((vocab, vocab), 1.0 / vocab, dtype=torch.float64)
    table[left_out] = 0.01 / (vocab - 1)
    table[left_out, eos] = 0.99
    return case(first.log().to(d.dtype), table.log().to(d.dtype), beam, d.integer(2, 6), eos,
                alpha=1.0)  # fmt: skip


def well_formed(sol, c):
    """The answer's score is the normalised score of its own tokens, eos appears only last,
    and a hypothesis without eos has exactly max_len tokens."""
    first, table, _, max_len, eos = c.args
    tokens, score = answer(sol, c)
    seq = tokens.tolist()
    if not 1 <= len(seq) <= max_len:
        fail(f"{len(seq)} tokens with max_len={max_len}")
    if any(not 0 <= t < first.shape[0] for t in seq):
        fail("a token id outside the vocabulary")
    if eos in seq[:-1]:
        fail("the eos token appears before the end")
    if seq[-1] != eos and len(seq) != max_len:
        fail(f"no eos, but only {len(seq)} tokens with max_len={max_len}")
    f, t = first.double().tolist(), table.double().tolist()
    s = f[seq[0]]
    for a, b in itertools.pairwise(seq):
        s += t[a][b]
    want = s / len(seq) ** c.kwargs["alpha"]
    if not math.isclose(float(score), want, rel_tol=1e-9, abs_tol=1e-9):
        fail("the score returned is not the normalised score of the tokens returned")


def rejects_bad_arguments(sol, c):
    first, table, _, _, _ = c.args
    v = first.shape[0]
    bad = [
        ([first, table, 0, 5, 0], "beam_size=0"),
        ([first, table, 2, 0, 0], "max_len=0"),
        ([first, table, 2, 5, v], "eos_id=V"),
        ([first, table, 2, 5, -1], "eos_id=-1"),
        ([first, table[:, :-1], 2, 5, 0], "a (V, V-1) table"),
        ([first[:-1], table, 2, 5, 0], "a (V-1,) first row"),
    ]
    calls = [{"op": "call", "target": "beam_search", "args": a, "kwargs": {}} for a, _ in bad]
    calls.append(
        {
            "op": "call",
            "target": "beam_search",
            "args": [first, table, 2, 5, 0],
            "kwargs": {"alpha": -0.5},
        }
    )
    labels = [w for _, w in bad] + ["alpha=-0.5"]
    for label, (ok, ans) in zip(labels, sol.batch(calls), strict=True):
        if ok or not str(ans).startswith("ValueError"):
            fail(
                f"beam_search with {label} should raise ValueError, got "
                f"{'a result' if ok else str(ans)[:80]}"
            )


def timed(d):
    first, table = model(d, 64, scale=2.0)
    return case(first, table, 4, 16, d.integer(0, 63), 0.6)


DECLARATIONS = [
    values(
        "the statement's rules on drawn models",
        run,
        drawn,
        expect=expected,
        cases=5,
        visible=True,
        dtypes=("float32", "float64"),
        description="V up to 12, beam 1-6, max_len 1-9, alpha 0-1.5",
    ),
    values("matches the reference", run, drawn, cases=5),
    values(
        "a beam wider than V^max_len is exhaustive",
        run,
        exhaustive_case,
        expect=exhaustive,
        cases=5,
        dtypes=("float32", "float64"),
    ),
    values(
        "beam_size 1 is greedy",
        run,
        greedy_case,
        expect=greedy,
        cases=4,
        visible=True,
        description="the most likely token at every step, until eos or max_len",
    ),
    values(
        "alpha 0 and alpha 1 on the same model",
        both_alphas,
        alpha_pair,
        expect=both_alphas_expected,
        cases=5,
    ),
    edge(
        "ties broken by parent rank, token id and finishing order",
        run,
        ties,
        expect=expected,
        cases=8,
        dtypes=("float32", "float64"),
    ),
    edge("eos as the first token", run, eos_first, expect=expected, cases=3),
    edge(
        "a finished hypothesis keeps its beam slot",
        run,
        slots_used,
        expect=expected,
        cases=3,
        dtypes=("float32", "float64"),
        description="the beam is not refilled after eos",
    ),
    edge("eos never likely: cut at max_len", run, eos_unlikely, expect=expected, cases=3),
    edge("more beams than tokens", run, wide_beam, expect=expected, cases=3),
    edge("max_len 1", run, one_step, expect=expected, cases=3),
    edge("a vocabulary of only eos", run, only_eos, expect=expected, cases=2),
    edge("alpha left out is 0", run, default_alpha, expect=expected, cases=3),
    edge("invalid arguments raise ValueError", rejects_bad_arguments, drawn, cases=1),
    shapes("returns (list of ints, float)", run, drawn, cases=1),
    prop("the answer is a well-formed hypothesis with its own score", well_formed, drawn, cases=5),
    performance(
        "time against the reference",
        "beam_search",
        timed,
        calls=2,
        description="V = 64, beam 4, 16 steps; reported with its spread, not graded "
        "in this exercise",
    ),
]
