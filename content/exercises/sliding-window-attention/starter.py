import torch


def sliding_window_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int
) -> torch.Tensor:
    """Causal attention where each query sees only the last `window` positions.

    q, k, v: (B, H, T, D). window: int >= 1.
    Query i attends key j when i - window < j <= i; scores are scaled by 1/sqrt(D).
    Returns (B, H, T, D).
    """
    raise NotImplementedError
