# Style: the whole block in float64 via F.layer_norm/F.gelu/F.linear, cast back; count from a shape table; self-test.
import math

import torch
import torch.nn.functional as F


def _param_shapes(d: int, d_ff: int) -> dict[str, tuple[int, ...]]:
    return {
        "norm1.weight": (d,), "norm1.bias": (d,),
        "self_attn.in_proj_weight": (3 * d, d), "self_attn.in_proj_bias": (3 * d,),
        "self_attn.out_proj.weight": (d, d), "self_attn.out_proj.bias": (d,),
        "norm2.weight": (d,), "norm2.bias": (d,),
        "linear1.weight": (d_ff, d), "linear1.bias": (d_ff,),
        "linear2.weight": (d, d_ff), "linear2.bias": (d,),
    }


def block_parameter_count(d_model: int, n_heads: int, d_ff: int) -> int:
    return sum(math.prod(shape) for shape in _param_shapes(d_model, d_ff).values())


def pre_ln_block(
    x: torch.Tensor, params: dict[str, torch.Tensor], n_heads: int, causal: bool = False
) -> torch.Tensor:
    p = {name: t.to(torch.float64) for name, t in params.items()}
    h = x.to(torch.float64)
    B, L, d = h.shape
    hd = d // n_heads

    a = F.layer_norm(h, (d,), p["norm1.weight"], p["norm1.bias"], eps=1e-5)
    q, k, v = F.linear(a, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"]).chunk(3, dim=-1)
    q, k, v = (t.view(B, L, n_heads, hd).transpose(1, 2) for t in (q, k, v))  # (B, H, L, hd)
    scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
    if causal:
        mask = torch.tril(torch.ones(L, L, dtype=torch.bool, device=x.device))
        scores = scores.masked_fill(~mask, float("-inf"))
    ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(B, L, d)
    h = h + F.linear(ctx, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])

    f = F.layer_norm(h, (d,), p["norm2.weight"], p["norm2.bias"], eps=1e-5)
    f = F.linear(F.gelu(F.linear(f, p["linear1.weight"], p["linear1.bias"])),
                 p["linear2.weight"], p["linear2.bias"])
    return (h + f).to(x.dtype)


if __name__ == "__main__":
    print(block_parameter_count(512, 8, 2048))  # 3152384
    d, d_ff, H = 8, 16, 2
    params = {n: torch.randn(s) * 0.3 for n, s in _param_shapes(d, d_ff).items()}
    x = torch.randn(2, 5, d)
    y = pre_ln_block(x, params, H, causal=True)
    print(y.shape, y.dtype)
    x2 = x.clone()
    x2[:, 3:] = 0.0
    print(torch.allclose(y[:, :3], pre_ln_block(x2, params, H, causal=True)[:, :3]))
