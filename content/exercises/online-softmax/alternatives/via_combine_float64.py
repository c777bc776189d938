# Style: update written as a combine with the block's own state; float64 inside, cast back
import torch

__all__ = ["online_logsumexp", "online_softmax_combine", "online_softmax_probs",
           "online_softmax_update"]  # fmt: skip


def _safe(m):
    return m.masked_fill(m == float("-inf"), 0.0)


def online_softmax_combine(m_a, l_a, m_b, l_b):
    dtype = m_a.dtype
    m_a, l_a, m_b, l_b = (x.double() for x in (m_a, l_a, m_b, l_b))
    m = torch.max(m_a, m_b)
    ref = _safe(m)
    l = l_a * (m_a - ref).exp() + l_b * (m_b - ref).exp()
    return m.to(dtype), l.to(dtype)


def _block_state(block):
    if block.shape[1] == 0:
        r = block.shape[0]
        return (torch.full((r,), float("-inf"), dtype=block.dtype, device=block.device),
                torch.zeros(r, dtype=block.dtype, device=block.device))  # fmt: skip
    m = block.max(dim=1).values
    return m, (block - _safe(m).unsqueeze(1)).exp().sum(dim=1)


def online_softmax_update(m, l, block):
    return online_softmax_combine(m, l, *_block_state(block))


def online_logsumexp(blocks):
    r = blocks[0].shape[0]
    m = torch.full((r,), float("-inf"), dtype=blocks[0].dtype)
    l = torch.zeros(r, dtype=blocks[0].dtype)
    for b in blocks:
        m, l = online_softmax_update(m, l, b)
    return torch.where(l > 0, _safe(m) + l.log(), torch.full_like(m, float("-inf")))


def online_softmax_probs(m, l, block):
    p = (block.double() - _safe(m.double())[:, None]).exp() / l.double()[:, None]
    return torch.nan_to_num(p, nan=0.0).to(block.dtype)


if __name__ == "__main__":
    print(online_logsumexp([torch.tensor([[1.0, 2.0]]), torch.tensor([[3.0]])]))
