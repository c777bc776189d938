# Bug: Heads are split by reshaping (batch, L, E) straight to (batch, heads, L, head_dim), which mixes positions and features instead of splitting each position's features into heads; a correct split reshapes to (batch, L, heads, head_dim) and transposes.
import math

import torch


class CachedSelfAttention:
    def __init__(self, w_q, w_k, w_v, w_o, num_heads):
        self.w_q, self.w_k, self.w_v, self.w_o = w_q, w_k, w_v, w_o
        self.heads = num_heads
        self.reset()

    def reset(self):
        self.keys = None
        self.values = None

    def _split(self, x):
        batch, length, embed = x.shape
        return x.reshape(batch, self.heads, length, embed // self.heads)

    def _attend(self, q, k, v):
        """q: (batch, heads, Tq, hd) for the last Tq of the Tk positions in k and v."""
        tq, tk = q.shape[-2], k.shape[-2]
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        # Bottom-right aligned: new token i sits at position (tk - tq) + i.
        allowed = torch.ones(tq, tk, dtype=torch.bool, device=q.device).tril(tk - tq)
        scores = scores.masked_fill(~allowed, float("-inf"))
        out = scores.softmax(dim=-1) @ v
        batch, _, _, head = out.shape
        return out.transpose(1, 2).reshape(batch, tq, self.heads * head) @ self.w_o.T

    def forward(self, x):
        q, k, v = (self._split(x @ w.T) for w in (self.w_q, self.w_k, self.w_v))
        return self._attend(q, k, v)

    def step(self, x_new):
        q, k, v = (self._split(x_new @ w.T) for w in (self.w_q, self.w_k, self.w_v))
        if self.keys is not None:
            # Only the new tokens are projected; the old keys and values are reused as they are.
            k = torch.cat([self.keys, k], dim=2)
            v = torch.cat([self.values, v], dim=2)
        self.keys, self.values = k, v
        return self._attend(q, k, v)
