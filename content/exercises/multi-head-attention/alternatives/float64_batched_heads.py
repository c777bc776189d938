# Style: heads folded into the batch axis for baddbmm/bmm, a hand-written softmax, float64 inside; __all__.
import torch
import torch.nn.functional as F

__all__ = ["multi_head_attention"]


def _split_heads(t: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, L, E) -> (B * num_heads, L, E / num_heads)."""
    B, L, E = t.shape
    return t.reshape(B, L, num_heads, E // num_heads).permute(0, 2, 1, 3).reshape(B * num_heads, L, -1)


def _merge_heads(t: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B * num_heads, L, hd) -> (B, L, num_heads * hd)."""
    BH, L, hd = t.shape
    return t.reshape(BH // num_heads, num_heads, L, hd).permute(0, 2, 1, 3).reshape(BH // num_heads, L, -1)


def multi_head_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    in_proj_weight: torch.Tensor,
    in_proj_bias: torch.Tensor,
    out_proj_weight: torch.Tensor,
    out_proj_bias: torch.Tensor,
    num_heads: int,
    key_padding_mask: torch.Tensor | None = None,
    causal: bool = False,
) -> torch.Tensor:
    dt = torch.float64
    B, Lq, E = query.shape
    Lk = key.shape[1]
    hd = E // num_heads
    W, b = in_proj_weight.to(dt), in_proj_bias.to(dt)

    q = _split_heads(F.linear(query.to(dt), W[:E], b[:E]), num_heads)
    k = _split_heads(F.linear(key.to(dt), W[E:2 * E], b[E:2 * E]), num_heads)
    v = _split_heads(F.linear(value.to(dt), W[2 * E:], b[2 * E:]), num_heads)

    bias = torch.zeros(B, 1, Lq, Lk, dtype=dt, device=query.device)
    if causal:
        bias = bias.masked_fill(
            torch.ones(Lq, Lk, dtype=torch.bool, device=query.device).triu(1), float("-inf")
        )
    if key_padding_mask is not None:
        bias = bias.masked_fill(key_padding_mask.bool()[:, None, None, :], float("-inf"))
    bias = bias.expand(B, num_heads, Lq, Lk).reshape(B * num_heads, Lq, Lk)

    scores = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=hd ** -0.5)
    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    attn = e / e.sum(dim=-1, keepdim=True)

    ctx = _merge_heads(torch.bmm(attn, v), num_heads)
    out = F.linear(ctx, out_proj_weight.to(dt), out_proj_bias.to(dt))
    return out.to(query.dtype)
