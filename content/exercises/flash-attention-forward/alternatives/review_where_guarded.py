# Style: preallocated outputs written tile by tile, the empty-row shift guarded with torch.where on every tile, written from the statement alone by a reviewer.
import math

import torch


def flash_attention(q, k, v, block_q, block_k, causal=False):
    B, H, T, D = q.shape
    S, Dv = k.shape[2], v.shape[3]
    offset = S - T  # query i sits at position i + offset
    scale = 1.0 / math.sqrt(D)
    neg_inf = float("-inf")
    out = q.new_empty(B, H, T, Dv)
    lse = q.new_empty(B, H, T)
    for q0 in range(0, T, block_q):
        q1 = min(q0 + block_q, T)
        qt = q[:, :, q0:q1] * scale
        rows = torch.arange(q0, q1, device=q.device)[:, None] + offset
        m = q.new_full((B, H, q1 - q0), neg_inf)
        l = q.new_zeros(B, H, q1 - q0)
        acc = q.new_zeros(B, H, q1 - q0, Dv)
        # With the mask, key tiles starting past the last query's position are all future.
        k_end = min(S, (q1 - 1) + offset + 1) if causal else S
        for k0 in range(0, k_end, block_k):
            k1 = min(k0 + block_k, S)
            s = qt @ k[:, :, k0:k1].transpose(-2, -1)  # (B, H, bq, bk)
            if causal:
                cols = torch.arange(k0, k1, device=q.device)[None, :]
                s = s.masked_fill(cols > rows, neg_inf)
            m_new = torch.maximum(m, s.amax(dim=-1))
            # Rows that have seen only masked keys keep m = -inf: shift them by 0 instead.
            ref = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            alpha = torch.exp(m - ref)
            p = torch.exp(s - ref[..., None])
            l = l * alpha + p.sum(dim=-1)
            acc = acc * alpha[..., None] + p @ v[:, :, k0:k1]
            m = m_new
        out[:, :, q0:q1] = acc / l[..., None]
        lse[:, :, q0:q1] = m + torch.log(l)
    return out, lse


if __name__ == "__main__":
    q = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])
    k = torch.tensor([[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]])
    v = torch.tensor([[[[1.0], [2.0], [3.0]]]])
    print(flash_attention(q, k, v, 1, 2, causal=True))
