import torch
import torch.nn.functional as F

from sandbox.grading import api_rule, case, edge, expect_close, fail, gradients, nontrivial
from sandbox.grading import performance, prop, shapes, values


def batch(d, *, b=None, t=None, v=None, scale=4.0, shift=0.0, ignored=0.25, ignore_index=None):
    """(B, T, V) logits (uniform in [shift - scale, shift + scale]) and (B, T) tokens, about
    `ignored` of them set to ignore_index (-100 unless given)."""
    b = b if b is not None else d.size(1, 4)
    t = t if t is not None else d.size(2, 12)
    v = v if v is not None else d.size(2, 17)
    logits = d.tensor((b, t, v), low=shift - scale, high=shift + scale)
    tokens = d.integers((b, t), 0, v)
    index = ignore_index if ignore_index is not None else -100
    dropped = d.tensor((b, t), low=0, high=1, dtype=torch.float64) < ignored
    tokens[dropped] = index
    if ignore_index is not None:
        return case(logits, tokens, ignore_index=index)
    return case(logits, tokens)


def drawn_index(d):
    return batch(d, ignore_index=d.choice([-100, -1, 0, 1]))


def trusted(c):
    """F.cross_entropy in float64 over the shifted, flattened targets; (0, 1) with none."""
    logits, tokens = c.args
    index = c.kwargs.get("ignore_index", -100)
    pred = logits[:, :-1].double().reshape(-1, logits.shape[-1])
    target = tokens[:, 1:].reshape(-1)
    count = int((target != index).sum())
    if count == 0:
        zero = torch.zeros((), dtype=logits.dtype)
        return zero, torch.ones((), dtype=logits.dtype)
    total = F.cross_entropy(pred, target, ignore_index=index, reduction="sum")
    loss = total / count
    return loss.to(logits.dtype), torch.exp(loss).to(logits.dtype)


def pair(value, where="(loss, perplexity)"):
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        fail(f"{where}: expected a tuple of two tensors, got {type(value).__name__}")
    for x in value:
        if not isinstance(x, torch.Tensor) or x.dim() != 0:
            fail(f"{where}: expected two 0-d tensors")
    return value


def last_position_and_first_token_unused(sol, c):
    """The last position's logits and the first token play no part in the loss."""
    logits, tokens = c.args
    before = pair(sol.call("causal_lm_loss", logits, tokens))
    logits2, tokens2 = logits.clone(), tokens.clone()
    logits2[:, -1] = torch.randn(logits2[:, -1].shape, dtype=logits.dtype) * 10
    tokens2[:, 0] = (tokens2[:, 0].clamp_min(0) + 1) % logits.shape[-1]
    after = pair(sol.call("causal_lm_loss", logits2, tokens2))
    expect_close(after[0], before[0], "loss after changing the last logits and first tokens")


def uniform_logits(sol, c):
    """Equal logits everywhere: every target has probability 1 / V, so the loss is log V and
    the perplexity is V."""
    logits, tokens = c.args
    v = logits.shape[-1]
    flat = torch.full_like(logits, 2.5)
    tokens = tokens.clamp_min(0)
    loss, ppl = pair(sol.call("causal_lm_loss", flat, tokens))
    expect_close(loss, torch.tensor(float(torch.log(torch.tensor(float(v)))), dtype=loss.dtype),
                 "loss with equal logits")  # fmt: skip
    expect_close(ppl, torch.tensor(float(v), dtype=ppl.dtype), "perplexity with equal logits")


def perplexity_is_exp(sol, c):
    loss, ppl = pair(sol.call("causal_lm_loss", *c.args))
    expect_close(ppl, torch.exp(loss), "perplexity against exp(loss)")


def pooled_not_per_sequence(sol, c):
    """Two sequences with different numbers of counted targets: the loss is their pooled
    mean, sum of both sums over the total count, computed here from each one's loss."""
    logits, tokens = c.args
    parts = []
    for i in range(logits.shape[0]):
        loss, _ = pair(sol.call("causal_lm_loss", logits[i : i + 1], tokens[i : i + 1]))
        parts.append((loss, int((tokens[i, 1:] != -100).sum())))
    total = sum(n for _, n in parts)
    if total == 0:
        return
    pooled = sum(loss * n for loss, n in parts) / total
    loss, _ = pair(sol.call("causal_lm_loss", logits, tokens))
    expect_close(loss, pooled, "the batch loss against the pooled per-sequence losses")


def uneven(d):
    """Batches of 2 to 4 sequences, each padded (-100) after a drawn length."""
    b, t, v = d.size(2, 4), d.size(4, 12), d.size(2, 11)
    logits = d.tensor((b, t, v))
    tokens = d.integers((b, t), 0, v)
    for i in range(b):
        tokens[i, d.integer(1, t) :] = -100
    return case(logits, tokens)


def all_ignored(d):
    c = batch(d, ignored=0.0)
    logits, tokens = c.args
    tokens[:, 1:] = -100
    return case(logits, tokens)


def timing_case(d):
    """4 sequences of 64 tokens over a vocabulary of 512, for the performance test."""
    return batch(d, b=4, t=64, v=512)


DECLARATIONS = [
    values("loss and perplexity with padding", "causal_lm_loss", batch, expect=trusted,
           visible=True, description="some targets are -100"),
    values("float32 and float64, drawn ignore_index", "causal_lm_loss", drawn_index,
           expect=trusted, cases=4, dtypes=("float32", "float64"),
           description="ignore_index may be a valid token id"),
    values("sequences of different lengths", "causal_lm_loss", uneven, expect=trusted, cases=3),
    shapes("two 0-d tensors of the logits' dtype", "causal_lm_loss", batch,
           dtypes=("float32", "float64")),
    gradients("gradient with respect to the logits", "causal_lm_loss",
              lambda d: batch(d, t=d.size(2, 7), v=d.size(2, 9)), cases=3),
    edge("a single position predicts nothing", "causal_lm_loss",
         lambda d: batch(d, t=1, ignored=0.0), expect=trusted, cases=2, visible=True,
         description="T = 1: loss 0, perplexity 1"),
    edge("every target ignored", "causal_lm_loss", all_ignored, expect=trusted, cases=2),
    gradients("every target ignored still has a (zero) gradient", "causal_lm_loss",
              all_ignored, cases=2),
    edge("logits shifted by a large constant", "causal_lm_loss",
         lambda d: batch(d, shift=100.0), expect=trusted, cases=3, exact=True,
         description="every logit near 100, beyond exp's float32 range"),
    edge("logits near 10 000 in float64", "causal_lm_loss",
         lambda d: batch(d, shift=1e4), expect=trusted, cases=2, dtypes=("float64",)),
    edge("logits spread over hundreds", "causal_lm_loss",
         lambda d: batch(d, v=d.size(3, 17), scale=400.0), expect=trusted, cases=3,
         dtypes=("float32", "float64")),
    prop("the last logits and the first token are not used",
         last_position_and_first_token_unused, batch, cases=3),
    prop("equal logits give log V and V", uniform_logits, batch, cases=3,
         dtypes=("float32", "float64")),
    prop("perplexity is exp(loss)", perplexity_is_exp, batch, cases=2),
    prop("the mean pools every counted target of the batch", pooled_not_per_sequence, uneven,
         cases=3),
    nontrivial("the loss is not zero", "causal_lm_loss", batch),
    performance("time against the reference", "causal_lm_loss", timing_case, calls=8,
                description="4 x 64 tokens, vocabulary 512; reported with its spread, not "
                "graded in this exercise"),
    api_rule("computes the loss itself", visible=True,
             description="no F.cross_entropy, F.nll_loss or their nn modules"),
]
