# Bug: A key tile is masked only when it starts after the first query's position (k0 > q0 + offset) rather than when it ends after it, so a tile that straddles the diagonal is used unmasked and queries see some keys in their future.
import math

import torch


def flash_attention(q, k, v, block_q, block_k, causal=False):
    t, d = q.shape[-2], q.shape[-1]
    s = k.shape[-2]
    offset = s - t  # with causal, query i sits at position i + offset among the keys
    outs, lses = [], []
    for q0 in range(0, t, block_q):
        q1 = min(q0 + block_q, t)
        # Fold the 1/sqrt(d) into the query tile once instead of into every score tile.
        qb = q[..., q0:q1, :] / math.sqrt(d)
        rows = qb.shape[:-1]
        m = torch.full(rows, float("-inf"), dtype=q.dtype, device=q.device)
        l = torch.zeros(rows, dtype=q.dtype, device=q.device)
        acc = torch.zeros(*rows, v.shape[-1], dtype=q.dtype, device=q.device)
        # Causal: no query of this tile sees past key (q1 - 1) + offset, so key tiles that
        # start after it are skipped whole, never computed and masked.
        k_stop = min(s, q1 + offset) if causal else s
        for k0 in range(0, k_stop, block_k):
            k1 = min(k0 + block_k, s)
            scores = qb @ k[..., k0:k1, :].transpose(-2, -1)  # (..., q1 - q0, k1 - k0)
            if causal and k0 > q0 + offset:
                # The tile crosses the diagonal: mask the keys after each query's position.
                qpos = torch.arange(q0, q1, device=q.device)[:, None] + offset
                kpos = torch.arange(k0, k1, device=q.device)[None, :]
                scores = scores.masked_fill(kpos > qpos, float("-inf"))
            # Key 0 is in the first tile and every query sees it (S >= T when causal), so m
            # is finite after the first tile and no -inf - (-inf) can occur.
            m_new = torch.maximum(m, scores.amax(dim=-1))
            p = torch.exp(scores - m_new[..., None])
            # What was accumulated relative to the old maximum is brought to the new one.
            alpha = torch.exp(m - m_new)
            l = l * alpha + p.sum(dim=-1)
            acc = acc * alpha[..., None] + p @ v[..., k0:k1, :]
            m = m_new
        # Normalise once per query tile, at the end, not once per key tile.
        outs.append(acc / l[..., None])
        lses.append(m + torch.log(l))
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)
