# Style: F.scaled_dot_product_attention with an explicit boolean mask; cache kept as a list of per-chunk tensors; __all__.
import torch
import torch.nn.functional as F

__all__ = ["CachedSelfAttention"]


class CachedSelfAttention:
    def __init__(self, w_q, w_k, w_v, w_o, num_heads):
        self.w_qkv = torch.cat([w_q, w_k, w_v], dim=0)   # (3E, E), one projection
        self.w_o = w_o
        self.num_heads = num_heads
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []

    def reset(self):
        self.keys.clear()
        self.values.clear()

    def _split(self, x):
        b, t, _ = x.shape
        q, k, v = F.linear(x, self.w_qkv).chunk(3, dim=-1)
        to_heads = lambda y: y.reshape(b, t, self.num_heads, -1).permute(0, 2, 1, 3)
        return to_heads(q), to_heads(k), to_heads(v)

    def _out(self, o):
        b, _, t, _ = o.shape
        return F.linear(o.permute(0, 2, 1, 3).reshape(b, t, -1), self.w_o)

    @staticmethod
    def _allowed(n_new, n_total, device):
        # new token i sits at position n_total - n_new + i and sees keys 0..that position
        rows = torch.arange(n_new, device=device).unsqueeze(1) + (n_total - n_new)
        cols = torch.arange(n_total, device=device).unsqueeze(0)
        return cols <= rows

    def forward(self, x):
        q, k, v = self._split(x)
        mask = self._allowed(x.shape[1], x.shape[1], x.device)
        return self._out(F.scaled_dot_product_attention(q, k, v, attn_mask=mask))

    def step(self, x_new):
        q, k, v = self._split(x_new)
        self.keys.append(k)
        self.values.append(v)
        k_all = torch.cat(self.keys, dim=2)
        v_all = torch.cat(self.values, dim=2)
        mask = self._allowed(x_new.shape[1], k_all.shape[2], x_new.device)
        return self._out(F.scaled_dot_product_attention(q, k_all, v_all, attn_mask=mask))
