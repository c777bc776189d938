import torch


def speculative_step(
    draft_probs: torch.Tensor,
    target_probs: torch.Tensor,
    draft_tokens: torch.Tensor,
    uniforms: torch.Tensor,
) -> torch.Tensor:
    """draft_probs (K, V): q_i, the draft model's distribution at position i;
    target_probs (K + 1, V): p_i, the target model's, one more row for the bonus token;
    draft_tokens (K,) int64: the tokens the draft proposed; uniforms (K + 1,) in [0, 1).
    Returns the emitted tokens, a 1-D int64 tensor of 1 to K + 1 tokens."""
    raise NotImplementedError
