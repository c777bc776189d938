import torch


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    block_q: int,
    block_k: int,
    causal: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Tiled attention forward with an online softmax.

    q: (B, H, T, D); k: (B, H, S, D); v: (B, H, S, Dv).
    block_q, block_k: tile sizes along T and S (>= 1; need not divide T or S).
    causal: query i sees key j only when j <= i + (S - T); then S >= T.
    Returns (out, lse): out (B, H, T, Dv) = softmax(q k^T / sqrt(D)) v,
    lse (B, H, T) = logsumexp of each query's scaled, masked scores.
    Never build the whole (T, S) score matrix: one (block_q, block_k) tile at a time.
    """
    raise NotImplementedError
