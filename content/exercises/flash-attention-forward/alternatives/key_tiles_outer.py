# Style: key tiles in the outer loop with query tiles inside, state kept per query tile in lists
import math

import torch

__all__ = ["flash_attention"]


def flash_attention(q, k, v, block_q, block_k, causal=False):
    t, s = q.shape[-2], k.shape[-2]
    qs = (q * (1 / math.sqrt(q.shape[-1]))).split(block_q, dim=-2)
    starts = list(range(0, t, block_q))
    m = [torch.full(x.shape[:-1], -math.inf, dtype=q.dtype) for x in qs]
    l = [torch.zeros(x.shape[:-1], dtype=q.dtype) for x in qs]
    acc = [torch.zeros(*x.shape[:-1], v.shape[-1], dtype=q.dtype) for x in qs]
    for k0, (kt, vt) in zip(range(0, s, block_k), zip(k.split(block_k, -2), v.split(block_k, -2))):
        kpos = torch.arange(k0, k0 + kt.shape[-2])
        for n, (q0, qt) in enumerate(zip(starts, qs)):
            qpos = torch.arange(q0, q0 + qt.shape[-2]) + (s - t)
            if causal and k0 > qpos[-1]:
                continue
            sc = qt @ kt.mT
            if causal:
                sc = sc.masked_fill(kpos[None, :] > qpos[:, None], -math.inf)
            m_new = torch.maximum(m[n], sc.amax(-1))
            scale = torch.exp(m[n] - m_new)
            p = torch.exp(sc - m_new[..., None])
            l[n] = l[n] * scale + p.sum(-1)
            acc[n] = acc[n] * scale[..., None] + p @ vt
            m[n] = m_new
    out = torch.cat([a / z[..., None] for a, z in zip(acc, l)], dim=-2)
    return out, torch.cat([mm + torch.log(z) for mm, z in zip(m, l)], dim=-1)


if __name__ == "__main__":
    q = torch.tensor([[[[1.0, 0.0], [0.0, 1.0]]]])
    k = torch.tensor([[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]])
    v = torch.tensor([[[[1.0], [2.0], [3.0]]]])
    print(flash_attention(q, k, v, 1, 2, causal=True))
