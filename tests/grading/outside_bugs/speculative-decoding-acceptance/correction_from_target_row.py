# Bug: After a rejection the replacement token is drawn from the target's row p_n itself instead of the residual max(0, p_n - q_n), so tokens the draft already proposed often get extra mass and the emitted token is no longer distributed as the target.
import torch


def _inverse_cdf(weights, u):
    """The smallest j with u * S < c_j (c the cumulative weights, S their total); past the
    end by rounding, the last index with non-zero weight."""
    cum = weights.cumsum(0)
    j = int(torch.searchsorted(cum, (u * cum[-1]).reshape(1), right=True))
    last = int(weights.nonzero()[-1])
    return min(j, last)


def speculative_step(draft_probs, target_probs, draft_tokens, uniforms):
    k = draft_tokens.shape[0]
    if draft_probs.dim() != 2 or draft_probs.shape[0] != k:
        raise ValueError("draft_probs must be (K, V)")
    vocab = draft_probs.shape[1]
    if tuple(target_probs.shape) != (k + 1, vocab) or tuple(uniforms.shape) != (k + 1,):
        raise ValueError("target_probs must be (K + 1, V) and uniforms (K + 1,)")

    rows = torch.arange(k)
    q = draft_probs[rows, draft_tokens]  # the draft's probability of its own proposals
    p = target_probs[rows, draft_tokens]  # the target's probability of the same tokens
    # Accept with probability min(1, p / q), written without the division: q = 0 then
    # accepts any token the target allows, and p = q = 0 rejects.
    accepted = uniforms[:k] * q < p
    rejected = (~accepted).nonzero()
    n = int(rejected[0]) if len(rejected) else k  # tokens accepted before the first rejection

    if n < k:
        # Sample the correction from the part of p that q under-covers: this is what makes
        # the emitted token distributed exactly as the target.
        weights = target_probs[n]
    else:
        weights = target_probs[k]  # every draft accepted: a bonus token from the target
    token = _inverse_cdf(weights, uniforms[k])
    return torch.cat([draft_tokens[:n], draft_tokens.new_tensor([token])])
