# Style: einsum over (batch, head, query, key); causal mask built from absolute positions; forward and step share one helper.
import math

import torch


class CachedSelfAttention:
    def __init__(self, w_q, w_k, w_v, w_o, num_heads):
        E = w_q.shape[0]
        if E % num_heads:
            raise ValueError("num_heads must divide the embedding size")
        self.w_q, self.w_k, self.w_v, self.w_o = w_q, w_k, w_v, w_o
        self.h = num_heads
        self.d = E // num_heads
        self.reset()

    def reset(self):
        self.k_cache = None          # (batch, heads, S, d)
        self.v_cache = None

    def _heads(self, x, w):
        # (b, t, E) -> (b, heads, t, d)
        y = torch.einsum("bte,fe->btf", x, w)
        return y.view(x.shape[0], x.shape[1], self.h, self.d).transpose(1, 2)

    def _attend(self, q, k, v, offset):
        """q: (b, h, T, d) for absolute positions offset..offset+T-1; k, v: (b, h, S, d)
        for positions 0..S-1."""
        T, S = q.shape[2], k.shape[2]
        scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.d)
        q_pos = torch.arange(offset, offset + T, device=q.device)[:, None]
        k_pos = torch.arange(S, device=q.device)[None, :]
        scores = scores.masked_fill(k_pos > q_pos, float("-inf"))
        attn = torch.softmax(scores, dim=-1)
        ctx = torch.einsum("bhts,bhsd->bhtd", attn, v)
        b = q.shape[0]
        merged = ctx.transpose(1, 2).reshape(b, T, self.h * self.d)
        return torch.einsum("bte,fe->btf", merged, self.w_o)

    def forward(self, x):
        q, k, v = (self._heads(x, w) for w in (self.w_q, self.w_k, self.w_v))
        return self._attend(q, k, v, offset=0)

    def step(self, x_new):
        q, k, v = (self._heads(x_new, w) for w in (self.w_q, self.w_k, self.w_v))
        past = 0 if self.k_cache is None else self.k_cache.shape[2]
        if self.k_cache is not None:
            k = torch.cat([self.k_cache, k], dim=2)
            v = torch.cat([self.v_cache, v], dim=2)
        self.k_cache, self.v_cache = k, v
        return self._attend(q, k, v, offset=past)
