# Style: LayerNorm, erf-GELU and the attention softmax written by hand, einsum for products; __all__.
import math

import torch

__all__ = ["block_parameter_count", "pre_ln_block"]

_EPS = 1e-5


def block_parameter_count(d_model: int, n_heads: int, d_ff: int) -> int:
    # n_heads only splits the projections; it adds no parameters
    d = d_model
    norms = 2 * (d + d)                     # two LayerNorms: weight and bias each
    attention = (3 * d * d + 3 * d) + (d * d + d)  # in_proj and out_proj
    feed_forward = (d_ff * d + d_ff) + (d * d_ff + d)
    return int(norms + attention + feed_forward)


def _layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    mu = x.mean(dim=-1, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=-1, keepdim=True)  # biased, as nn.LayerNorm
    return (x - mu) / torch.sqrt(var + _EPS) * w + b


def _gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _dense(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.einsum("...i,oi->...o", x, w) + b


def _self_attention(
    x: torch.Tensor, p: dict[str, torch.Tensor], n_heads: int, causal: bool
) -> torch.Tensor:
    B, L, d = x.shape
    hd = d // n_heads
    qkv = _dense(x, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"])
    q, k, v = (t.reshape(B, L, n_heads, hd) for t in qkv.split(d, dim=-1))
    s = torch.einsum("bihc,bjhc->bhij", q, k) / math.sqrt(hd)
    if causal:
        s = s.masked_fill(torch.ones(L, L, dtype=torch.bool, device=x.device).triu(1), float("-inf"))
    s = s - s.amax(dim=-1, keepdim=True)
    a = s.exp()
    a = a / a.sum(dim=-1, keepdim=True)
    o = torch.einsum("bhij,bjhc->bihc", a, v).reshape(B, L, d)
    return _dense(o, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])


def pre_ln_block(
    x: torch.Tensor, params: dict[str, torch.Tensor], n_heads: int, causal: bool = False
) -> torch.Tensor:
    p = params
    h = x + _self_attention(_layer_norm(x, p["norm1.weight"], p["norm1.bias"]), p, n_heads, causal)
    z = _layer_norm(h, p["norm2.weight"], p["norm2.bias"])
    z = _dense(_gelu(_dense(z, p["linear1.weight"], p["linear1.bias"])), p["linear2.weight"], p["linear2.bias"])
    return h + z
