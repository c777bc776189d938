# Bug: block_parameter_count leaves out the attention's input projection bias (3 * d_model scalars); a correct count includes the q, k and v biases.
import math

import torch
import torch.nn.functional as F


def block_parameter_count(d_model, n_heads, d_ff):
    # The head count only splits the projections: it never changes their size.
    attention = 3 * d_model * d_model + d_model * d_model + d_model
    feed_forward = d_model * d_ff + d_ff + d_ff * d_model + d_model
    norms = 2 * (2 * d_model)
    return attention + feed_forward + norms


def _attention(x, p, n_heads, causal):
    batch, length, d = x.shape
    head = d // n_heads
    q, k, v = F.linear(x, p["self_attn.in_proj_weight"], p["self_attn.in_proj_bias"]).chunk(3, -1)
    q, k, v = (t.reshape(batch, length, n_heads, head).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(head)
    if causal:
        future = torch.ones(length, length, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    out = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, length, d)
    return F.linear(out, p["self_attn.out_proj.weight"], p["self_attn.out_proj.bias"])


def pre_ln_block(x, params, n_heads, causal=False):
    d = x.shape[-1]
    p = params
    # Pre-LN: each sublayer sees a normalised copy, and the residual stream itself is never
    # normalised, so the identity path from input to output stays clean.
    h = x + _attention(F.layer_norm(x, (d,), p["norm1.weight"], p["norm1.bias"], 1e-5), p,
                       n_heads, causal)  # fmt: skip
    z = F.layer_norm(h, (d,), p["norm2.weight"], p["norm2.bias"], 1e-5)
    z = F.linear(F.gelu(F.linear(z, p["linear1.weight"], p["linear1.bias"])),
                 p["linear2.weight"], p["linear2.bias"])  # fmt: skip
    return h + z
