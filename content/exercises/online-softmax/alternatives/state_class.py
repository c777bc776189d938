# Style: a small state class with in-place-free methods; tree reduction via pairwise merges
import torch


class RowState:
    def __init__(self, m, l):
        self.m, self.l = m, l

    @classmethod
    def empty(cls, rows, like):
        return cls(torch.full((rows,), float("-inf"), dtype=like.dtype, device=like.device),
                   torch.zeros(rows, dtype=like.dtype, device=like.device))  # fmt: skip

    def reference_point(self, m):
        return torch.nan_to_num(m, neginf=0.0)

    def merge(self, m_b, l_b):
        m = torch.maximum(self.m, m_b)
        c = self.reference_point(m)
        return RowState(m, self.l * torch.exp(self.m - c) + l_b * torch.exp(m_b - c))

    def absorb(self, block):
        if block.numel() == 0:
            return RowState(self.m.clone(), self.l.clone())
        m_b = block.amax(dim=1)
        l_b = torch.exp(block - self.reference_point(m_b)[:, None]).sum(dim=1)
        return self.merge(m_b, l_b)


def online_softmax_update(m, l, block):
    s = RowState(m, l).absorb(block)
    return s.m, s.l


def online_softmax_combine(m_a, l_a, m_b, l_b):
    s = RowState(m_a, l_a).merge(m_b, l_b)
    return s.m, s.l


def online_logsumexp(blocks):
    s = RowState.empty(blocks[0].shape[0], blocks[0])
    for b in blocks:
        s = s.absorb(b)
    return torch.log(s.l) + s.reference_point(s.m)


def online_softmax_probs(m, l, block):
    c = torch.nan_to_num(m, neginf=0.0)
    return torch.exp(block - c[:, None]) / l.clamp(min=torch.finfo(l.dtype).tiny)[:, None]
