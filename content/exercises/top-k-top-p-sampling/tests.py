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

# A threshold closer than this to a cumulative sum would let float rounding decide which
# token is kept; the drawn top_p keeps clear of every such sum.
MARGIN = 2e-5


def ranking(row, temperature):
    """Token indices by scaled logit, highest first, lower index first on ties (float64)."""
    scaled = [x / temperature for x in row]
    return sorted(range(len(row)), key=lambda i: (-scaled[i], i)), scaled


def softmax_of(values):
    top = max(values)
    if top == -math.inf:
        return [0.0] * len(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


def kept_tokens(row, temperature, top_k, top_p):
    """The statement's filters, one row in plain float64 Python; also the sums compared with
    top_p (to keep the drawn top_p clear of them)."""
    order, scaled = ranking(row, temperature)
    if 0 < top_k < len(row):
        order = order[:top_k]
    sums = []
    if top_p < 1:
        probs = softmax_of([scaled[i] for i in order])
        kept, before = [], 0.0
        for i, q in zip(order, probs, strict=True):
            sums.append(before)
            if before < top_p:
                kept.append(i)
            before += q
        order = kept
    return order, scaled, sums


def trusted(c):
    """The expected distribution, computed in float64 from the statement alone."""
    logits, temperature, top_k, top_p = c.args
    out = torch.zeros(logits.shape, dtype=torch.float64)
    for b, row in enumerate(logits.double().tolist()):
        if temperature == 0:
            best = max(row)
            out[b, row.index(best)] = 1.0
            continue
        kept, scaled, _ = kept_tokens(row, temperature, top_k, top_p)
        for i, p in zip(kept, softmax_of([scaled[i] for i in kept]), strict=True):
            out[b, i] = p
    return out.to(logits.dtype)


def clear_top_p(logits, temperature, top_k, top_p):
    """top_p moved up (or down) until no row's cumulative sum is within MARGIN of it."""
    rows = logits.double().tolist()
    sums = [s for row in rows for s in kept_tokens(row, temperature, top_k, 0.5)[2]]
    step = MARGIN if top_p < 0.9 else -MARGIN
    while any(abs(s - top_p) < MARGIN for s in sums):
        top_p += step
    return top_p


def filters(
    d, *, batch=None, vocab=None, ties=False, temperature=None, top_k=None, top_p=None, scale=None
):
    """A batch of logits and a drawn combination of the three filters."""
    b = batch if batch is not None else d.size(1, 24)
    v = vocab if vocab is not None else d.size(2, 60)
    if ties:
        # Small integers: many equal logits, at the top-k boundary and inside the nucleus.
        logits = d.integers((b, v), -2, 3).to(d.dtype)
    else:
        logits = d.tensor((b, v), normal=True) * (scale or d.choice([1.0, 2.0, 4.0]))
    t = temperature if temperature is not None else d.choice([0.5, 0.7, 1.0, 1.3, 2.0])
    k = top_k if top_k is not None else d.choice([0, 1, 2, 5, v // 2, v - 1, v, v + 3])
    p = top_p if top_p is not None else d.choice([1.0, d.number(0.05, 0.99)])
    if 0 < p < 1 and t > 0:
        p = clear_top_p(logits, t, k, p)
    return case(logits, t, k, p)


def only_top_k(d):
    return filters(d, top_p=1.0, top_k=d.choice([1, 2, 3, 7]))


def only_top_p(d):
    return filters(d, top_k=0, top_p=d.number(0.1, 0.95))


def both(d):
    v = d.size(3, 60)
    return filters(d, vocab=v, top_k=d.integer(2, v), top_p=d.number(0.3, 0.95))


def cold_nucleus(d):
    """A temperature far from 1 changes which tokens make up the nucleus."""
    return filters(
        d, temperature=d.choice([0.25, 0.4, 3.0, 5.0]), top_k=0, top_p=d.number(0.3, 0.9), scale=2.0
    )


def tied(d):
    return filters(
        d, ties=True, top_k=d.choice([0, 1, 2, 3, 4]), top_p=d.choice([1.0, d.number(0.2, 0.9)])
    )


def greedy(d):
    """temperature = 0; in even cases every row's maximum is shared by two or more tokens."""
    c = filters(
        d, ties=d.case % 2 == 0, temperature=0, top_k=d.choice([0, 3]), top_p=d.choice([1.0, 0.5])
    )
    logits, t, k, p = c.args
    if d.case % 2 == 0 and logits.shape[1] > 1:
        logits = logits.clone()
        top = logits.amax(-1)
        for b in range(logits.shape[0]):
            cols = d.permutation(logits.shape[1])[: d.integer(2, min(3, logits.shape[1]))]
            logits[b, cols] = top[b]
    return case(logits, t, k, p)


def banned_tokens(d):
    """-inf logits (tokens masked out) in every row, the maximum always finite."""
    c = filters(d, vocab=d.size(4, 40), top_p=d.choice([1.0, 0.9]), top_k=d.choice([0, 3, 30]))
    logits, t, k, p = c.args
    mask = torch.rand(logits.shape, generator=d.generator) < 0.5
    mask[:, 0] = False
    logits = logits.masked_fill(mask, -math.inf)
    if 0 < p < 1:
        p = clear_top_p(logits, t, k, p)
    return case(logits, t, k, p)


def huge_logits(d):
    return filters(d, scale=3000.0, top_p=d.choice([1.0, 0.7]))


def one_token(d):
    return filters(d, vocab=1, top_k=d.choice([0, 1, 5]), top_p=d.choice([1.0, 0.3]))


def empty_batch(d):
    return filters(d, batch=0, top_k=3, top_p=0.5)


def tiny_top_p(d):
    """top_p below the largest probability: the most probable token alone."""
    return filters(d, top_k=0, top_p=1e-4)


def defaults(d):
    return case(d.tensor((d.size(1, 8), d.size(2, 30)), normal=True))


def flat_rows(d):
    """Rows of equal logits over a power-of-two vocabulary: every probability is exactly 1/V,
    and top_p = m/V falls exactly on a cumulative sum (kept only if strictly above it)."""
    v = d.choice([2, 4, 8, 16])
    m = d.integer(1, v - 1)
    logits = d.tensor((d.size(1, 6), 1), low=-3, high=3).expand(-1, v).contiguous()
    return case(logits, d.choice([0.5, 1.0, 2.0]), 0, m / v)


def peaked(d):
    """One logit far above the rest: in float32 the cumulative sum reaches 1.0 before the tail,
    whose tiny probabilities must stay non-zero when no filter is on."""
    b, v = d.size(1, 8), d.size(3, 40)
    logits = d.tensor((b, v), normal=True)
    logits[:, d.integer(0, v - 1)] += 25
    return case(logits, 1.0, d.choice([0, v, v + 2]), 1.0)


def tail_not_dropped(sol, c):
    p = sol.call("filter_logits", *c.args)
    if bool((p == 0).any()):
        b, i = (p == 0).nonzero()[0].tolist()
        fail(f"row {b}, token {i}: probability exactly 0 with no filter on (top_p = 1)")


def rows_sum_to_one(sol, c):
    p = sol.call("filter_logits", *c.args)
    if bool((p < 0).any()):
        fail("a negative probability")
    expect_close(p.sum(-1), torch.ones(p.shape[0], dtype=p.dtype), "each row's sum", scale=10)


def ratios_kept(sol, c):
    """Inside the kept set the probabilities keep the tempered softmax's ratios:
    p_i / p_j = exp((l_i - l_j) / T), and every dropped token is exactly 0."""
    logits, t, k, top_p = c.args
    p = sol.call("filter_logits", *c.args).double()
    for b, row in enumerate(logits.double().tolist()):
        kept, scaled, _ = kept_tokens(row, t, k, top_p)
        dropped = sorted(set(range(len(row))) - set(kept))
        if dropped and bool((p[b, dropped] != 0).any()):
            fail(f"row {b}: a token outside the kept set has a non-zero probability")
        best = kept[0]
        ratio = p[b, kept] / p[b, best]
        expect_close(
            ratio,
            torch.tensor([math.exp(scaled[i] - scaled[best]) for i in kept], dtype=torch.float64),
            f"row {b}: p_i / p_max",
        )


def top_k_counts(sol, c):
    """Exactly min(top_k, V) non-zero probabilities, ties at the boundary included."""
    logits, _t, k, _top_p = c.args
    p = sol.call("filter_logits", *c.args)
    want = min(k, logits.shape[1]) if k > 0 else logits.shape[1]
    got = (p > 0).sum(-1)
    if bool((got != want).any()):
        b = int((got != want).nonzero()[0])
        fail(f"row {b}: {int(got[b])} tokens kept with top_k={k}, expected {want}")


def rejects_bad_settings(sol, c):
    (logits,) = c.args
    bad = [{"temperature": -0.5}, {"top_k": -1}, {"top_p": 0.0}, {"top_p": -0.2}, {"top_p": 1.5}]
    answers = sol.batch(
        [{"op": "call", "target": "filter_logits", "args": [logits], "kwargs": kw} for kw in bad]
    )
    for kw, (ok, answer) in zip(bad, answers, strict=True):
        if ok or not str(answer).startswith("ValueError"):
            fail(
                f"filter_logits(logits, **{kw}) should raise ValueError, got "
                f"{'a result' if ok else str(answer)[:80]}"
            )


# Sampling --------------------------------------------------------------------------------


def distributions(d, *, vocab=None, zeros=True):
    """Rows of probabilities (some exactly 0) and uniforms kept clear of every cumulative sum."""
    b, v = d.size(1, 32), vocab if vocab is not None else d.size(1, 50)
    w = d.tensor((b, v), low=0, high=1, dtype="float64") ** 3
    if zeros:
        w = w * (torch.rand((b, v), generator=d.generator, dtype=torch.float64) < 0.6)
        w[:, d.integer(0, v - 1)] += 0.1
    probs = w / w.sum(-1, keepdim=True)
    cum = probs.cumsum(-1)
    u = torch.rand(b, generator=d.generator, dtype=torch.float64) * 0.999
    for i in range(b):
        while bool(((cum[i] - u[i]).abs() < 1e-6).any()):
            u[i] = (u[i] + 1e-5) % 0.999
    return case(probs.to(d.dtype), u.to(d.dtype))


def dyadic_boundaries(d):
    """Probabilities that are exact binary fractions and uniforms exactly on a cumulative sum:
    a u equal to a boundary belongs to the next token with mass."""
    b, v = d.size(2, 12), d.size(2, 16)
    counts = torch.randint(0, 4, (b, v), generator=d.generator)
    counts[:, 0] += 1
    rows, us = [], []
    for r in counts.tolist():
        total = sum(r)
        size = 1 << (total - 1).bit_length()
        r[-1] += size - total  # now sums to a power of two
        cum = [sum(r[: j + 1]) for j in range(v)]
        inside = [x for x in cum if x < size]
        stop = d.choice(inside) if inside else 0
        rows.append([x / size for x in r])
        us.append(stop / size)
    return case(torch.tensor(rows, dtype=d.dtype), torch.tensor(us, dtype=d.dtype))


def short_rows(d):
    """Rows whose float sum falls short of 1, trailing zeros after the last token with mass,
    and a uniform between the row's sum and 1."""
    b, v = d.size(1, 8), d.size(3, 20)
    last = d.integer(0, v - 2)
    w = torch.rand((b, v), generator=d.generator, dtype=torch.float64) + 0.1
    w[:, last + 1 :] = 0
    probs = w / w.sum(-1, keepdim=True) * (1 - 1e-3)
    u = torch.full((b,), 1 - 5e-4, dtype=torch.float64)
    return case(probs.to(d.dtype), u.to(d.dtype))


def trusted_sample(c):
    probs, u = c.args
    out = []
    for row, x in zip(probs.double().tolist(), u.double().tolist(), strict=True):
        total, pick = 0.0, None
        for j, q in enumerate(row):
            total += q
            if x < total:
                pick = j
                break
        if pick is None:
            pick = max(j for j, q in enumerate(row) if q > 0)
        out.append(pick)
    return torch.tensor(out, dtype=torch.int64)


def never_a_zero_token(sol, c):
    probs, u = c.args
    grid = torch.linspace(0, 0.9999, 257, dtype=u.dtype)
    for i in range(min(probs.shape[0], 4)):
        tokens = sol.call("sample", probs[i].expand(257, -1), grid)
        if bool((probs[i][tokens] == 0).any()):
            fail(f"row {i}: a token of probability 0 was sampled")


def frequencies_match(sol, c):
    """Over an even grid of n uniforms, each token is drawn about n * p times (within 1)."""
    probs, _ = c.args
    n = 4096
    grid = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    for i in range(min(probs.shape[0], 3)):
        tokens = sol.call("sample", probs[i].expand(n, -1).contiguous(), grid.to(probs.dtype))
        counts = torch.bincount(tokens, minlength=probs.shape[1]).double()
        if bool(((counts - n * probs[i].double()).abs() > 1.01).any()):
            fail(f"row {i}: token frequencies over an even grid of uniforms are not n * p")


def timed(d):
    """A batch of 256 rows over 128 tokens, every filter on."""
    return case(d.tensor((256, 128), normal=True) * 3, 0.8, 40, 0.9)


DECLARATIONS = [
    values(
        "filters on small batches",
        "filter_logits",
        filters,
        cases=4,
        visible=True,
        expect=trusted,
        description="drawn temperature, top_k and top_p",
    ),
    values(
        "matches the reference", "filter_logits", filters, cases=4, dtypes=("float32", "float64")
    ),
    values(
        "top-k alone",
        "filter_logits",
        only_top_k,
        cases=3,
        expect=trusted,
        visible=True,
        description="top_p = 1",
    ),
    values(
        "top-p alone",
        "filter_logits",
        only_top_p,
        cases=4,
        expect=trusted,
        visible=True,
        description="top_k = 0",
    ),
    values(
        "top-k then top-p",
        "filter_logits",
        both,
        cases=4,
        expect=trusted,
        dtypes=("float32", "float64"),
    ),
    values(
        "temperature before the nucleus", "filter_logits", cold_nucleus, cases=4, expect=trusted
    ),
    edge(
        "ties broken by the lower index",
        "filter_logits",
        tied,
        cases=5,
        expect=trusted,
        dtypes=("float32", "float64"),
    ),
    edge("temperature 0 is greedy", "filter_logits", greedy, cases=4, expect=trusted),
    edge("banned tokens at -inf", "filter_logits", banned_tokens, cases=3, expect=trusted),
    edge("logits in the thousands", "filter_logits", huge_logits, cases=2, expect=trusted),
    edge("a vocabulary of one token", "filter_logits", one_token, cases=2, expect=trusted),
    edge("an empty batch", "filter_logits", empty_batch, cases=1),
    edge(
        "top_p exactly on a cumulative sum",
        "filter_logits",
        flat_rows,
        cases=4,
        expect=trusted,
        dtypes=("float32", "float64"),
    ),
    edge("top_p = 1 keeps every token", tail_not_dropped, peaked, cases=3),
    edge(
        "top_p below the largest probability", "filter_logits", tiny_top_p, cases=2, expect=trusted
    ),
    edge(
        "defaults leave the softmax unchanged",
        "filter_logits",
        defaults,
        cases=2,
        expect=lambda c: torch.softmax(c.args[0].double(), -1).to(c.args[0].dtype),
    ),
    edge("invalid settings raise ValueError", rejects_bad_settings, defaults, cases=1),
    shapes(
        "same shape and dtype as the logits",
        "filter_logits",
        filters,
        dtypes=("float32", "float64"),
    ),
    prop("rows are distributions", rows_sum_to_one, filters, cases=4),
    prop("kept tokens keep the tempered ratios, dropped ones are 0", ratios_kept, filters, cases=4),
    prop(
        "top-k keeps exactly k tokens, even with ties",
        top_k_counts,
        lambda d: filters(
            d, ties=d.case % 2 == 0, top_p=1.0, top_k=d.integer(1, 6), vocab=d.size(6, 40)
        ),
        cases=4,
    ),
    nontrivial("the distribution is not zero", "filter_logits", filters),
    values(
        "sample: inverse CDF",
        "sample",
        distributions,
        cases=4,
        expect=trusted_sample,
        visible=True,
        description="the first token whose cumulative probability exceeds u",
    ),
    values(
        "sample matches the reference",
        "sample",
        distributions,
        cases=3,
        dtypes=("float32", "float64"),
    ),
    edge(
        "sample: u exactly on a cumulative sum",
        "sample",
        dyadic_boundaries,
        cases=4,
        expect=trusted_sample,
        dtypes=("float32", "float64"),
    ),
    edge(
        "sample: u past a row's rounded sum", "sample", short_rows, cases=3, expect=trusted_sample
    ),
    edge(
        "sample: one token",
        "sample",
        lambda d: distributions(d, vocab=1),
        cases=2,
        expect=trusted_sample,
    ),
    shapes("sample returns int64 indices, one per row", "sample", distributions),
    prop(
        "sample never returns a token of probability 0", never_a_zero_token, distributions, cases=3
    ),
    prop(
        "sample's frequencies over a grid of uniforms are the probabilities",
        frequencies_match,
        lambda d: distributions(d, zeros=d.case % 2 == 0),
        cases=3,
    ),
    performance(
        "speed against the reference",
        "filter_logits",
        timed,
        rounds=5,
        calls=4,
        description="256 rows over 128 tokens with temperature, top_k and top_p: "
        "graded, at most 3x the reference's time",
    ),
]
