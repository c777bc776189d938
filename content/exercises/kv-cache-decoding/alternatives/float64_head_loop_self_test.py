# Style: float64 inside with a cast back; explicit loop over heads with matmul per head; cache grown by concatenation; a __main__ self-test.
import torch


class CachedSelfAttention:
    def __init__(self, w_q, w_k, w_v, w_o, num_heads):
        self.weights = (w_q, w_k, w_v, w_o)
        self.num_heads = num_heads
        self.head_dim = w_q.shape[0] // num_heads
        self.cache_k = None          # (batch, S, E), float64
        self.cache_v = None

    def reset(self):
        self.cache_k = self.cache_v = None

    def _attention(self, q, k, v, first_pos):
        """q: (b, T, E), k, v: (b, S, E), all float64; query i is at position first_pos + i."""
        T, S = q.shape[1], k.shape[1]
        hd = self.head_dim
        i = torch.arange(T, device=q.device).view(T, 1) + first_pos
        j = torch.arange(S, device=q.device).view(1, S)
        future = j > i
        heads = []
        for h in range(self.num_heads):
            sl = slice(h * hd, (h + 1) * hd)
            s = q[..., sl] @ k[..., sl].transpose(-1, -2) * hd ** -0.5
            s = s.masked_fill(future, float("-inf"))
            s = s - s.amax(dim=-1, keepdim=True)
            p = s.exp()
            p = p / p.sum(dim=-1, keepdim=True)
            heads.append(p @ v[..., sl])
        return torch.cat(heads, dim=-1) @ self.weights[3].to(torch.float64).T

    def _qkv(self, x):
        x64 = x.to(torch.float64)
        return tuple(x64 @ w.to(torch.float64).T for w in self.weights[:3])

    def forward(self, x):
        q, k, v = self._qkv(x)
        return self._attention(q, k, v, 0).to(x.dtype)

    def step(self, x_new):
        q, k, v = self._qkv(x_new)
        start = 0
        if self.cache_k is not None:
            start = self.cache_k.shape[1]
            k = torch.cat((self.cache_k, k), dim=1)
            v = torch.cat((self.cache_v, v), dim=1)
        self.cache_k, self.cache_v = k, v
        return self._attention(q, k, v, start).to(x_new.dtype)


if __name__ == "__main__":
    torch.manual_seed(0)
    E, heads = 8, 2
    w_q, w_k, w_v, w_o = (torch.randn(E, E) / E ** 0.5 for _ in range(4))
    x = torch.randn(1, 5, E)
    layer = CachedSelfAttention(w_q, w_k, w_v, w_o, num_heads=heads)
    full = layer.forward(x)
    parts = [layer.step(x[:, :3]), layer.step(x[:, 3:4]), layer.step(x[:, 4:5])]
    print("chunks == full:", torch.allclose(torch.cat(parts, dim=1), full, atol=1e-6))
    layer.reset()
    one_by_one = torch.cat([layer.step(x[:, t:t + 1]) for t in range(5)], dim=1)
    print("token by token == full:", torch.allclose(one_by_one, full, atol=1e-6))
    first = full[:, :1]
    print("first output only sees itself:", torch.allclose(
        first, (x[:, :1] @ w_v.T) @ w_o.T, atol=1e-6))
    layer.reset()
    print("after reset:", torch.allclose(layer.step(x[:, :1]), full[:, :1], atol=1e-6))
