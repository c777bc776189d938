# Bug: The nucleus keeps a token only while the cumulative mass including it is below top_p (cumsum < top_p) instead of the mass before it, so the token that makes the total reach top_p is dropped (and a row whose top token alone reaches top_p keeps nothing).
import torch


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if top_k < 0:
        raise ValueError(f"top_k must be >= 0, got {top_k}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    vocab = logits.shape[-1]
    if temperature == 0:
        # Greedy: argmax returns the first maximal index, the lowest one on ties.
        return torch.nn.functional.one_hot(logits.argmax(dim=-1), vocab).to(logits.dtype)

    scaled = logits / temperature
    # One ranking serves both filters: probability descending, lower index first on ties
    # (a stable sort keeps equal values in index order).
    ranked, order = torch.sort(scaled, dim=-1, descending=True, stable=True)
    keep = torch.ones_like(ranked, dtype=torch.bool)
    if 0 < top_k < vocab:
        keep[:, top_k:] = False
    if top_p < 1:
        # The nucleus is measured on the distribution top-k left, renormalised.
        probs = torch.softmax(ranked.masked_fill(~keep, float("-inf")), dim=-1)
        # Mass strictly before each token: the token that crosses top_p is kept, and the
        # first one always is (nothing comes before it).
        before = probs.cumsum(dim=-1)
        keep &= before < top_p
    # Back from rank order to vocabulary order.
    kept = torch.zeros_like(keep).scatter(-1, order, keep)
    return torch.softmax(scaled.masked_fill(~kept, float("-inf")), dim=-1)


def sample(probs, uniforms):
    cum = probs.cumsum(dim=-1)
    # The first index whose cumulative probability exceeds u: right=True skips every index
    # whose cumulative sum equals u, so zero-probability tokens are never chosen.
    tokens = torch.searchsorted(cum, uniforms.to(cum.dtype).unsqueeze(-1), right=True)
    # A u at or past the rounded total falls off the end: take the last token with mass.
    vocab = probs.shape[-1]
    last = vocab - 1 - (probs > 0).flip(-1).to(torch.int64).argmax(dim=-1, keepdim=True)
    return torch.minimum(tokens, last).squeeze(-1)
