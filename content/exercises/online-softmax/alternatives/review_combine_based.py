# Style: the block folded in as a state of its own through combine, one guard helper for empty rows, written from the statement alone by a reviewer.
import torch


def _anchor(m):
    # The shift used inside exp: the maximum itself, or 0 for an empty row (m = -inf), so that
    # -inf - (-inf) never happens; an empty row's terms are exp(-inf) = 0 either way.
    return torch.where(m == float("-inf"), torch.zeros_like(m), m)


def online_softmax_combine(m_a, l_a, m_b, l_b):
    m = torch.maximum(m_a, m_b)
    ref = _anchor(m)
    return m, l_a * torch.exp(m_a - ref) + l_b * torch.exp(m_b - ref)


def online_softmax_update(m, l, block):
    if block.shape[1] == 0:
        return m.clone(), l.clone()
    # The block on its own is a state too; folding it in is a combine.
    m_blk = block.amax(dim=1)
    l_blk = torch.exp(block - _anchor(m_blk)[:, None]).sum(dim=1)
    return online_softmax_combine(m, l, m_blk, l_blk)


def online_logsumexp(blocks):
    first = blocks[0]
    m = torch.full((first.shape[0],), float("-inf"), dtype=first.dtype, device=first.device)
    l = torch.zeros_like(m)
    for block in blocks:
        m, l = online_softmax_update(m, l, block)
    return m + torch.log(l)


def online_softmax_probs(m, l, block):
    denom = torch.where(l > 0, l, torch.ones_like(l))
    return torch.exp(block - _anchor(m)[:, None]) / denom[:, None]


if __name__ == "__main__":
    inf = float("inf")
    blocks = [torch.tensor([[1.0, 2.0], [0.0, -inf]]),
              torch.tensor([[3.0], [-inf]]),
              torch.tensor([[0.5, 1000.0, -2.0], [-inf, -inf, -inf]])]
    m, l = torch.full((2,), -inf), torch.zeros(2)
    for b in blocks:
        m, l = online_softmax_update(m, l, b)
        print(m, l)
    print(online_logsumexp(blocks))
