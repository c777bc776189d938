# Style: the textbook recurrence one column at a time inside each block, with explicit masks
import math

import torch


def online_softmax_update(m, l, block):
    m, l = m.clone(), l.clone()
    for j in range(block.shape[1]):
        x = block[:, j]
        m_new = torch.maximum(m, x)
        finite = m_new > -math.inf
        ref = torch.where(finite, m_new, torch.zeros_like(m_new))
        l = l * torch.exp(m - ref) + torch.exp(x - ref)
        m = m_new
    return m, l


def online_softmax_combine(m_a, l_a, m_b, l_b):
    m = torch.maximum(m_a, m_b)
    ref = torch.where(m > -math.inf, m, torch.zeros_like(m))
    return m, l_a * torch.exp(m_a - ref) + l_b * torch.exp(m_b - ref)


def online_logsumexp(blocks):
    state = (torch.full((blocks[0].shape[0],), -math.inf, dtype=blocks[0].dtype),
             torch.zeros(blocks[0].shape[0], dtype=blocks[0].dtype))  # fmt: skip
    for b in blocks:
        state = online_softmax_update(*state, b)
    m, l = state
    return torch.where(m > -math.inf, m, torch.zeros_like(m)) + torch.log(l)


def online_softmax_probs(m, l, block):
    ref = torch.where(m > -math.inf, m, torch.zeros_like(m))
    num = torch.exp(block - ref[:, None])
    den = torch.where(l > 0, l, torch.ones_like(l))
    return num / den[:, None]
