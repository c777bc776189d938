# Style: while loops over tiles, running statistics in float64, output written into slices
import math

import torch


def flash_attention(q, k, v, block_q, block_k, causal=False):
    T, S = q.shape[-2], k.shape[-2]
    shift = S - T
    scale = 1.0 / math.sqrt(q.shape[-1])
    out = torch.empty(*q.shape[:-1], v.shape[-1], dtype=torch.float64)
    lse = torch.empty(q.shape[:-1], dtype=torch.float64)
    qd, kd, vd = q.double(), k.double(), v.double()
    i = 0
    while i < T:
        i_end = min(i + block_q, T)
        qt = qd[..., i:i_end, :]
        row_max = torch.full(qt.shape[:-1], -math.inf, dtype=torch.float64)
        row_sum = torch.zeros(qt.shape[:-1], dtype=torch.float64)
        o = torch.zeros(*qt.shape[:-1], v.shape[-1], dtype=torch.float64)
        j = 0
        while j < S:
            j_end = min(j + block_k, S)
            if causal and j > i_end - 1 + shift:
                break  # this tile and every later one lie in the future of the whole tile
            s = torch.einsum("...id,...jd->...ij", qt, kd[..., j:j_end, :]) * scale
            if causal:
                qi = torch.arange(i, i_end).unsqueeze(-1) + shift
                kj = torch.arange(j, j_end).unsqueeze(0)
                s = torch.where(kj <= qi, s, torch.tensor(-math.inf, dtype=torch.float64))
            new_max = torch.maximum(row_max, s.max(dim=-1).values)
            correction = torch.exp(row_max - new_max)
            p = torch.exp(s - new_max.unsqueeze(-1))
            row_sum = correction * row_sum + p.sum(-1)
            o = correction.unsqueeze(-1) * o + torch.einsum(
                "...ij,...jd->...id", p, vd[..., j:j_end, :]
            )
            row_max = new_max
            j = j_end
        out[..., i:i_end, :] = o / row_sum.unsqueeze(-1)
        lse[..., i:i_end] = row_max + row_sum.log()
        i = i_end
    return out.to(q.dtype), lse.to(q.dtype)
