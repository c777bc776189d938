import torch


def causal_lm_loss(
    logits: torch.Tensor, tokens: torch.Tensor, ignore_index: int = -100
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits: (B, T, V) floats, the model's output at every position;
    tokens: (B, T) int64, the input sequence, ignore_index where a target must not count.

    Returns (loss, perplexity): two 0-d tensors of logits' dtype, the mean next-token
    negative log-likelihood over the targets that count, and exp(loss).
    """
    raise NotImplementedError
