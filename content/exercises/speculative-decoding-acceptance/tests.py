import torch

from sandbox.grading import case, edge, fail, performance, prop, shapes, values

MARGIN = 1e-4  # drawn uniforms keep this far from every decision boundary


def trusted_sample(weights, u):
    """Smallest j with u * S < c_j, in float64; the last non-zero weight if none."""
    total = sum(weights)
    run = 0.0
    for j, w in enumerate(weights):
        run += w
        if u * total < run:
            return j
    return max(j for j, w in enumerate(weights) if w > 0)


def residual(p_row, q_row):
    w = [max(0.0, a - b) for a, b in zip(p_row, q_row, strict=True)]
    return w if any(x > 0 for x in w) else list(p_row)


def trusted(c):
    """The statement's step in plain Python floats."""
    q, p, drafts, u = (t.double().tolist() if t.is_floating_point() else t.tolist() for t in c.args)
    out = []
    for i, x in enumerate(drafts):
        if u[i] * q[i][x] < p[i][x]:
            out.append(x)
        else:
            out.append(trusted_sample(residual(p[i], q[i]), u[-1]))
            return torch.tensor(out, dtype=torch.int64)
    out.append(trusted_sample(p[len(drafts)], u[-1]))
    return torch.tensor(out, dtype=torch.int64)


def boundaries(weights):
    total = sum(weights)
    run, out = 0.0, []
    for w in weights:
        run += w
        out.append(run / total)
    return out


def clear(u, edges):
    """u moved until it is MARGIN away from every boundary."""
    while any(abs(u - e) < MARGIN for e in edges):
        u = (u + 3 * MARGIN) % 0.999
    return u


def distributions(d, rows, vocab, *, zeros=False):
    w = d.tensor((rows, vocab), low=0, high=1, dtype="float64") ** 2
    if zeros:
        w = w * (torch.rand((rows, vocab), generator=d.generator, dtype=torch.float64) < 0.6)
        w[:, 0] += 0.05
    return w / w.sum(-1, keepdim=True)


def step_case(d, *, k=None, vocab=None, drafts_from_q=True, zeros=None, accept_bias=None):
    """A draft of K tokens with its q, the target's p, and uniforms clear of every boundary."""
    k = k if k is not None else d.integer(1, 6)
    v = vocab if vocab is not None else d.size(2, 40)
    z = zeros if zeros is not None else d.case % 2 == 1
    q = distributions(d, max(k, 1), v, zeros=z)[:k]
    p = distributions(d, k + 1, v, zeros=z)
    if drafts_from_q and k:
        drafts = torch.multinomial(q, 1, generator=d.generator).flatten()
    else:
        drafts = torch.randint(0, v, (k,), generator=d.generator)
    u = torch.rand(k + 1, generator=d.generator, dtype=torch.float64)
    if accept_bias is not None:
        u[:k] = u[:k] * accept_bias
    qd, pd = q.tolist(), p.tolist()
    for i in range(k):
        x = int(drafts[i])
        ratio = pd[i][x] / qd[i][x] if qd[i][x] > 0 else 2.0
        u[i] = clear(float(u[i]), [ratio])
    edges = [e for i in range(k) for e in boundaries(residual(pd[i], qd[i]))]
    edges += boundaries(pd[k])
    u[k] = clear(float(u[k]), edges)
    return case(q.to(d.dtype), p.to(d.dtype), drafts, u.to(d.dtype))


def recleared(q, p, drafts, u):
    """The last uniform moved clear of the boundaries of p and q as they now are."""
    k = drafts.shape[0]
    qd, pd = q.double().tolist(), p.double().tolist()
    edges = [e for i in range(k) for e in boundaries(residual(pd[i], qd[i]))]
    edges += boundaries(pd[k])
    u = u.clone()
    u[k] = clear(float(u[k]), edges)
    return case(q, p, drafts, u)


def all_accepted(d):
    """The target likes every draft token more than the draft does: all K pass, plus a bonus."""
    c = step_case(d, zeros=False)
    q, p, drafts, u = c.args
    p = p.clone()
    k = drafts.shape[0]
    p[torch.arange(k), drafts] = torch.maximum(
        p[torch.arange(k), drafts], q[torch.arange(k), drafts]
    )
    p = p / p.sum(-1, keepdim=True)
    u = u.clone()
    u[:k] = (
        u[:k]
        * torch.minimum(
            p[torch.arange(k), drafts] / q[torch.arange(k), drafts], torch.ones(k, dtype=p.dtype)
        ).clamp(max=1)
        * 0.9
    )
    return recleared(q, p, drafts, u)


def first_rejected(d):
    """The target gives the first draft token probability 0: rejected whatever u is."""
    c = step_case(d, zeros=False)
    q, p, drafts, u = c.args
    p = p.clone()
    p[0, drafts[0]] = 0
    p[0] = p[0] / p[0].sum()
    u = u.clone()
    u[0] = 0.0
    return recleared(q, p, drafts, u)


def p_at_least_q(d):
    """p(x) >= q(x) at every draft token and u close to 1: still all accepted."""
    c = all_accepted(d)
    q, p, drafts, u = c.args
    u = u.clone()
    k = drafts.shape[0]
    ok = p[torch.arange(k), drafts] >= q[torch.arange(k), drafts]
    u[:k] = torch.where(ok, torch.full_like(u[:k], 0.9999), u[:k])
    return case(q, p, drafts, u)


def q_zero(d):
    """The draft proposed tokens it gave probability 0; the target allows the first (accept)
    and gives the second probability 0 too (reject: p = q = 0)."""
    v = d.size(3, 20)
    q = distributions(d, 2, v)
    p = distributions(d, 3, v)
    q[0, 1] = 0
    q[1, 2] = 0
    p[1, 2] = 0
    q, p = q / q.sum(-1, keepdim=True), p / p.sum(-1, keepdim=True)
    u = torch.tensor(
        [d.number(0.0, 0.99), d.number(0.0, 0.99), d.number(0.01, 0.99)], dtype=torch.float64
    )
    u[2] = clear(float(u[2]), boundaries(residual(p[1].tolist(), q[1].tolist())))
    return case(q.to(d.dtype), p.to(d.dtype), torch.tensor([1, 2]), u.to(d.dtype))


def p_equals_q(d):
    """Identical draft and target rows: nothing to correct. A draft token with p = q = 0 is
    rejected, the residual is all zero, and the replacement is drawn from p itself."""
    v = d.size(3, 20)
    q = distributions(d, 1, v, zeros=True)
    zero = int((q[0] == 0).nonzero()[0]) if bool((q[0] == 0).any()) else None
    if zero is None:
        q[0, v - 1] = 0
        q = q / q.sum(-1, keepdim=True)
        zero = v - 1
    p = torch.cat([q, distributions(d, 1, v)])
    u = torch.tensor([d.number(0, 0.99), d.number(0, 0.99)], dtype=torch.float64)
    u[1] = clear(float(u[1]), boundaries(q[0].tolist()))
    return case(q.to(d.dtype), p.to(d.dtype), torch.tensor([zero]), u.to(d.dtype))


def exact_boundaries(d):
    """Dyadic probabilities with u * q(x) == p(x) exactly (rejected: the test is strict) and
    the last uniform exactly on a cumulative boundary of the residual."""
    v = 4
    q = torch.tensor([[0.5, 0.25, 0.125, 0.125]], dtype=torch.float64)
    p = torch.tensor([[0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25]], dtype=torch.float64)
    perm = d.permutation(v)
    q, p = q[:, perm], p[:, perm]
    x = perm.index(0)  # the token with q = 0.5, p = 0.25: u = 0.5 sits on the boundary
    # Residual max(0, p - q) is 0.125 on the two tokens with q = 0.125 (in permuted order).
    u_last = d.choice([0.0, 0.5])
    return case(
        q.to(d.dtype), p.to(d.dtype), torch.tensor([x]), torch.tensor([0.5, u_last], dtype=d.dtype)
    )


def no_draft(d):
    """K = 0: the step is one sample from target_probs[0]."""
    return step_case(d, k=0)


def step(sol, c):
    out = sol.call("speculative_step", *c.args)
    if not isinstance(out, torch.Tensor) or out.dtype != torch.int64 or out.dim() != 1:
        fail("speculative_step should return a 1-D int64 tensor")
    return out


def well_formed(sol, c):
    q, p, drafts, _ = c.args
    out = step(sol, c)
    k = drafts.shape[0]
    n = out.shape[0] - 1
    if not 0 <= n <= k:
        fail(f"{out.shape[0]} tokens emitted with K = {k}: expected 1 to K + 1")
    if not torch.equal(out[:n], drafts[:n]):
        fail("the tokens before the last are not the accepted prefix of the draft")
    last = int(out[-1])
    if not 0 <= last < p.shape[-1]:
        fail("the last token is outside the vocabulary")
    weights = p[k] if n == k else (p[n] - q[n]).clamp(min=0)
    if n < k and not bool((weights > 0).any()):
        weights = p[n]
    if float(weights[last]) <= 0:
        fail(f"token {last} was sampled from a distribution that gives it probability 0")


def first_token_is_target_distributed(sol, c):
    """The point of the algorithm: averaged over the draft token x ~ q and both uniforms, the
    first emitted token is distributed exactly as target_probs[0]. Measured on even grids of
    uniforms: for each x, the acceptance rate over u_0 and the replacement's distribution
    over u_K (with u_0 just below 1, which rejects whenever p(x) < q(x))."""
    q, p = c.args[0], c.args[1]
    v = q.shape[1]
    n = 200
    grid = ((torch.arange(n, dtype=torch.float64) + 0.5) / n).tolist()
    calls, meta = [], []
    for x in range(v):
        if float(q[0, x]) == 0:
            continue
        for g in grid:
            u = torch.tensor([g, 0.5], dtype=q.dtype)
            calls.append(
                {
                    "op": "call",
                    "target": "speculative_step",
                    "args": [q, p, torch.tensor([x]), u],
                    "kwargs": {},
                }
            )
            meta.append(("accept", x))
        for g in grid:
            u = torch.tensor([1 - 1e-9, g], dtype=q.dtype)
            calls.append(
                {
                    "op": "call",
                    "target": "speculative_step",
                    "args": [q, p, torch.tensor([x]), u],
                    "kwargs": {},
                }
            )
            meta.append(("replace", x))
    accept = torch.zeros(v, dtype=torch.float64)
    replace = torch.zeros(v, v, dtype=torch.float64)
    answers = []
    for start in range(0, len(calls), 200):  # a few hundred calls per message
        answers += sol.batch(calls[start : start + 200])
    for (kind, x), (ok, out) in zip(meta, answers, strict=True):
        if not ok:
            fail(f"speculative_step raised: {str(out)[:100]}")
        if kind == "accept":
            accept[x] += (len(out) == 2 and int(out[0]) == x) / n
        else:
            replace[x, int(out[0])] += 1 / n
    qd = q[0].double()
    marginal = torch.zeros(v, dtype=torch.float64)
    for x in range(v):
        if float(qd[x]) == 0:
            continue
        rejected = replace[x] if float(accept[x]) < 1 else torch.zeros(v, dtype=torch.float64)
        marginal += qd[x] * (
            accept[x] * torch.nn.functional.one_hot(torch.tensor(x), v) + (1 - accept[x]) * rejected
        )
    worst = float((marginal - p[0].double()).abs().max())
    if worst > 2.0 / n:
        fail(
            f"P(first emitted token) differs from target_probs[0] by up to {worst:.3f} "
            f"(grids of {n} uniforms allow {2.0 / n:.3f})"
        )


def small_pair(d):
    """K = 1 over a small vocabulary, for the distribution check."""
    return step_case(d, k=1, vocab=d.integer(2, 6), zeros=d.case % 2 == 1)


def rejects_bad_shapes(sol, c):
    q, p, drafts, u = c.args
    bad = [
        ([q, p[:-1], drafts, u], "target_probs with K rows"),
        ([q, p, drafts, u[:-1]], "K uniforms"),
        ([q[:, :-1], p, drafts, u], "draft_probs with V - 1 columns"),
        ([q[:-1], p, drafts, u], "draft_probs with K - 1 rows"),
    ]
    calls = [{"op": "call", "target": "speculative_step", "args": a, "kwargs": {}} for a, _ in bad]
    for (_, label), (ok, ans) in zip(bad, sol.batch(calls), strict=True):
        if ok or not str(ans).startswith("ValueError"):
            fail(f"{label} should raise ValueError, got {'a result' if ok else str(ans)[:80]}")


def timed(d):
    return step_case(d, k=4, vocab=1000, zeros=False)


DECLARATIONS = [
    values(
        "drawn steps",
        step,
        step_case,
        expect=trusted,
        cases=6,
        visible=True,
        dtypes=("float32", "float64"),
        description="K up to 6, V up to 40, the draft tokens drawn from q",
    ),
    values("matches the reference", step, lambda d: step_case(d, drafts_from_q=False), cases=5),
    values(
        "mostly accepted", step, lambda d: step_case(d, accept_bias=0.3), expect=trusted, cases=4
    ),
    edge(
        "every draft token accepted, then a bonus token",
        step,
        all_accepted,
        expect=trusted,
        cases=4,
        visible=True,
        description="every u_i below p_i(x) / q_i(x): K + 1 tokens out",
    ),
    edge("the first draft token rejected", step, first_rejected, expect=trusted, cases=3),
    edge("p >= q accepts even with u near 1", step, p_at_least_q, expect=trusted, cases=3),
    edge("draft tokens with q = 0", step, q_zero, expect=trusted, cases=3),
    edge(
        "p equal to q: a rejected p = q = 0 token falls back to p",
        step,
        p_equals_q,
        expect=trusted,
        cases=3,
    ),
    edge(
        "exactly on the acceptance and sampling boundaries",
        step,
        exact_boundaries,
        expect=trusted,
        cases=4,
        dtypes=("float32", "float64"),
    ),
    edge("K = 0", step, no_draft, expect=trusted, cases=2),
    edge(
        "mismatched shapes raise ValueError",
        rejects_bad_shapes,
        lambda d: step_case(d, k=3),
        cases=1,
    ),
    shapes("returns a 1-D int64 tensor", step, step_case, cases=2),
    prop("the output is an accepted prefix and one sampled token", well_formed, step_case, cases=6),
    prop(
        "the first token is distributed exactly as the target's",
        first_token_is_target_distributed,
        small_pair,
        cases=4,
        dtypes=("float64",),
    ),
    performance(
        "time against the reference",
        "speculative_step",
        timed,
        description="K = 4 over 1,000 tokens; reported with its spread, not graded in "
        "this exercise",
    ),
]
