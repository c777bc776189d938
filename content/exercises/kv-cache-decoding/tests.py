import torch
from torch import nn

from sandbox.grading import api_rule, case, edge, expect_close, nontrivial, prop, shapes
from sandbox.grading import fail, performance, sequence, trajectory, values


def problem(d, *, chunks="tokens", high=9):
    """Weights, a sequence, and how to cut it into steps: "tokens" (one at a time),
    "prefill" (a prompt, then one at a time) or "drawn" (chunks of drawn sizes)."""
    heads = d.choice((1, 2, 3))
    embed = heads * d.size(1, 4)
    length = d.size(1, high)
    x = d.tensor((d.size(1, 3), length, embed))
    weights = [d.weights(embed, embed) for _ in range(4)]
    sizes = [1] * length
    if chunks == "prefill" and length > 1:
        prompt = d.integer(2, length)
        sizes = [prompt] + [1] * (length - prompt)
    elif chunks == "drawn":
        sizes, left = [], length
        while left:
            sizes.append(d.integer(1, left))
            left -= sizes[-1]
    return case(x, data={"weights": weights, "heads": heads, "sizes": sizes})


def pieces(c):
    (x,) = c.args
    start = 0
    for size in c.data["sizes"]:
        yield x[:, start : start + size]
        start += size


def layer(sol, c):
    return sol.new("CachedSelfAttention", *c.data["weights"], c.data["heads"])


def decode(sol, c):
    """The outputs of each step, fed the sequence in the case's chunks."""
    ref = layer(sol, c)
    return [sol.method(ref, "step", piece) for piece in pieces(c)]


def shaped(value, shape, where):
    """The learner's answer as a tensor of the shape this check needs, or the check fails
    (so a malformed answer fails the test instead of breaking the check)."""
    if not isinstance(value, torch.Tensor) or tuple(value.shape) != tuple(shape):
        got = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        fail(f"{where}: expected a tensor of shape {tuple(shape)}, got {got}")
    return value


def full(sol, c):
    return sol.method(layer(sol, c), "forward", *c.args)


def torch_full(c):
    """Causal nn.MultiheadAttention with the same weights, in the grader's process."""
    (x,) = c.args
    w_q, w_k, w_v, w_o = c.data["weights"]
    embed = x.shape[-1]
    mha = nn.MultiheadAttention(embed, c.data["heads"], bias=False, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([w_q, w_k, w_v]))
        mha.out_proj.weight.copy_(w_o)
    mask = torch.ones(x.shape[1], x.shape[1], dtype=torch.bool).triu(1)
    out, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
    return out.detach()


def torch_steps(c):
    out, start = torch_full(c), 0
    steps = []
    for size in c.data["sizes"]:
        steps.append(out[:, start : start + size])
        start += size
    return steps


def steps_equal_own_forward(sol, c):
    (x,) = c.args
    whole = full(sol, c)
    steps = [shaped(out, piece.shape, f"step {i + 1}'s output")
             for i, (out, piece) in enumerate(zip(decode(sol, c), pieces(c)))]  # fmt: skip
    got = torch.cat(steps, dim=1)
    expect_close(got, whole, "step-by-step outputs against your forward on the whole sequence")


def reset_starts_over(sol, c):
    (x,) = c.args
    ref = layer(sol, c)
    for piece in pieces(c):
        sol.method(ref, "step", piece)
    sol.method(ref, "reset")
    other = torch.flip(x, dims=[1]) * 0.5
    steps = [sol.method(ref, "step", other[:, t : t + 1]) for t in range(x.shape[1])]
    got = torch.cat([shaped(s, other[:, :1].shape, "a step's output") for s in steps], dim=1)
    expect_close(got, sol.method(ref, "forward", other), "a second sequence after reset")


def interleaved(d):
    """A layer's weights, a sequence of 7 tokens fed one per step, and a second sequence that
    full forwards (which must leave the cache alone) are run on in between."""
    c = problem(d, high=1)
    (x,) = c.args
    batch, _, embed = x.shape
    return case(d.tensor((batch, 7, embed)), data={**c.data, "other": d.tensor((batch, 4, embed))})


def next_token(sol, obj, c, k):
    """The next token of the sequence: the cache holds those stepped since the last reset."""
    since = c.data["calls"][:k]
    if "reset" in since:
        since = since[len(since) - since[::-1].index("reset"):]
    (x,) = c.args
    at = since.count("step")
    return sol.method(obj, "step", x[:, at : at + 1])


MOVES = {
    "step": next_token,
    "forward": lambda sol, obj, c, k: sol.method(obj, "forward", c.data["other"]),
    "reset": lambda sol, obj, c, k: sol.method(obj, "reset"),
}


def timed_token(d):
    """One new token for a batch of 4, 64 features; the case also carries the seed of the
    layer's weights and of its prompt."""
    return case(d.tensor((4, 1, 64)), data={"seed": d.integer(0, 2**62)})


def after_prompt(sol, c):
    """The performance test's setup, outside the clock: a layer of 4 heads over 64 features,
    drawn from the case's seed, that has already taken a 48-token prompt in one step; each
    timed call then decodes one more token against the growing cache."""
    g = torch.Generator().manual_seed(c.data["seed"])
    weights = [(torch.rand(64, 64, generator=g) - 0.5) / 4 for _ in range(4)]
    ref = sol.new("CachedSelfAttention", *weights, 4)
    sol.method(ref, "step", torch.randn(4, 48, 64, generator=g))
    return ref


DECLARATIONS = [
    values("forward equals causal nn.MultiheadAttention", full, problem, expect=torch_full,
           visible=True, description="the whole sequence at once, weights injected"),
    trajectory("token by token equals the full forward", decode, problem, expect=torch_steps,
               visible=True, cases=3, description="one token per step"),
    trajectory("prompt then tokens equals the full forward", decode,
               lambda d: problem(d, chunks="prefill"), expect=torch_steps, cases=3),
    trajectory("chunks of drawn sizes equal the full forward", decode,
               lambda d: problem(d, chunks="drawn"), expect=torch_steps, cases=4),
    trajectory("float64 steps against the reference", decode,
               lambda d: problem(d, chunks="drawn"), dtypes=("float64",)),
    prop("steps equal your own forward", steps_equal_own_forward,
         lambda d: problem(d, chunks="drawn"), visible=True),
    prop("reset starts a new sequence", reset_starts_over, lambda d: problem(d, chunks="drawn")),
    sequence("steps, full forwards and resets interleaved", layer, MOVES, interleaved,
             length=7),
    shapes("step output shape and dtype", decode, lambda d: problem(d, chunks="prefill"),
           dtypes=("float32", "float64")),
    edge("a single token", decode, lambda d: problem(d, high=1), expect=torch_steps, cases=1),
    nontrivial("the outputs are not zero", decode, problem),
    performance("time against the reference", "step", timed_token, setup=after_prompt,
                description="decoding one token at a time after a 48-token prompt, a batch of "
                "4, 64 features in 4 heads; reported with its spread, not graded in this "
                "exercise"),
    api_rule("does not call nn.MultiheadAttention", visible=True),
]
