# Style: a class holding one query tile's running state, with an explicit bias for the mask
import math

import torch


class TileState:
    def __init__(self, q_tile, dv):
        rows = q_tile.shape[:-1]
        self.max = torch.full(rows, float("-inf"), dtype=q_tile.dtype)
        self.denom = torch.zeros(rows, dtype=q_tile.dtype)
        self.numer = torch.zeros(*rows, dv, dtype=q_tile.dtype)

    def absorb(self, scores, values):
        m_new = torch.max(self.max, scores.max(dim=-1).values)
        weights = torch.exp(scores - m_new.unsqueeze(-1))
        decay = torch.exp(self.max - m_new)
        self.denom = self.denom * decay + weights.sum(dim=-1)
        self.numer = self.numer * decay.unsqueeze(-1) + torch.matmul(weights, values)
        self.max = m_new

    def result(self):
        return self.numer / self.denom.unsqueeze(-1), self.max + torch.log(self.denom)


def flash_attention(q, k, v, block_q, block_k, causal=False):
    T, S, D = q.shape[-2], k.shape[-2], q.shape[-1]
    outs, lses = [], []
    for a in range(0, T, block_q):
        b = min(T, a + block_q)
        state = TileState(q[..., a:b, :], v.shape[-1])
        for c in range(0, S, block_k):
            e = min(S, c + block_k)
            scores = torch.matmul(q[..., a:b, :], k[..., c:e, :].transpose(-1, -2)) / math.sqrt(D)
            if causal:
                rel = torch.arange(c, e)[None, :] - torch.arange(a, b)[:, None] - (S - T)
                bias = torch.zeros(rel.shape, dtype=q.dtype).masked_fill(rel > 0, float("-inf"))
                scores = scores + bias
            state.absorb(scores, v[..., c:e, :])
        o, z = state.result()
        outs.append(o)
        lses.append(z)
    return torch.cat(outs, -2), torch.cat(lses, -1)
