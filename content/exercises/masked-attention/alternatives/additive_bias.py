# Style: masks folded into one additive bias (0 or -inf) built by a helper, matmul with baddbmm; __all__.
import torch

__all__ = ["attention"]


def _mask_bias(
    batch: int, lq: int, lk: int, causal: bool, key_padding_mask: torch.Tensor | None,
    dtype: torch.dtype, device: torch.device,
) -> torch.Tensor:
    """(batch, lq, lk): 0 where the query may look at the key, -inf where it may not."""
    bias = torch.zeros(batch, lq, lk, dtype=dtype, device=device)
    if causal:
        future = torch.ones(lq, lk, dtype=torch.bool, device=device).triu(lk - lq + 1)
        bias = bias.masked_fill(future, float("-inf"))
    if key_padding_mask is not None:
        bias = bias.masked_fill(key_padding_mask.bool().unsqueeze(1), float("-inf"))
    return bias


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    causal: bool = False,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    batch, lq, d = q.shape
    lk = k.shape[1]
    bias = _mask_bias(batch, lq, lk, causal, key_padding_mask, q.dtype, q.device)
    # bias + (q @ k^T) * d^-1/2 in one call
    scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=d**-0.5)

    peak = scores.amax(dim=-1, keepdim=True)
    peak = peak.masked_fill(torch.isneginf(peak), 0.0)  # a query that sees nothing
    unnorm = torch.exp(scores - peak)  # exp(-inf) = 0 for every masked key
    norm = unnorm.sum(dim=-1, keepdim=True)
    has_any = norm > 0
    weights = unnorm / torch.where(has_any, norm, torch.ones_like(norm))
    return torch.bmm(weights, v)
