# Style: small callable classes per sublayer (norm, attention, feed-forward) built from the state dict.
import math

import torch
import torch.nn.functional as F


class _Norm:
    def __init__(self, params: dict[str, torch.Tensor], prefix: str) -> None:
        self.w, self.b = params[prefix + ".weight"], params[prefix + ".bias"]

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(x, self.w.shape, self.w, self.b, 1e-5)


class _SelfAttention:
    def __init__(self, params: dict[str, torch.Tensor], n_heads: int, causal: bool) -> None:
        self.w_in = params["self_attn.in_proj_weight"]
        self.b_in = params["self_attn.in_proj_bias"]
        self.w_out = params["self_attn.out_proj.weight"]
        self.b_out = params["self_attn.out_proj.bias"]
        self.n_heads, self.causal = n_heads, causal

    @staticmethod
    def n_params(d: int) -> int:
        return 4 * d * d + 4 * d

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        B, L, d = x.shape
        H = self.n_heads
        qkv = F.linear(x, self.w_in, self.b_in).view(B, L, 3, H, d // H)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each (B, H, L, hd)
        q = q * (d // H) ** -0.5
        scores = torch.matmul(q, k.transpose(-1, -2))
        if self.causal:
            pos = torch.arange(L, device=x.device)
            scores = scores.masked_fill(pos[None, :] > pos[:, None], float("-inf"))
        out = torch.matmul(F.softmax(scores, dim=-1), v)  # (B, H, L, hd)
        return F.linear(out.transpose(1, 2).flatten(2), self.w_out, self.b_out)


class _FeedForward:
    def __init__(self, params: dict[str, torch.Tensor]) -> None:
        self.l1 = (params["linear1.weight"], params["linear1.bias"])
        self.l2 = (params["linear2.weight"], params["linear2.bias"])

    @staticmethod
    def n_params(d: int, d_ff: int) -> int:
        return 2 * d * d_ff + d_ff + d

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(F.gelu(F.linear(x, *self.l1), approximate="none"), *self.l2)


def block_parameter_count(d_model: int, n_heads: int, d_ff: int) -> int:
    layer_norms = 2 * 2 * d_model
    return layer_norms + _SelfAttention.n_params(d_model) + _FeedForward.n_params(d_model, d_ff)


def pre_ln_block(
    x: torch.Tensor, params: dict[str, torch.Tensor], n_heads: int, causal: bool = False
) -> torch.Tensor:
    norm1, norm2 = _Norm(params, "norm1"), _Norm(params, "norm2")
    attn = _SelfAttention(params, n_heads, causal)
    ffn = _FeedForward(params)
    h = x + attn(norm1(x))
    return h + ffn(norm2(h))
