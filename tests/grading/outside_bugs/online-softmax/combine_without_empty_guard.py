# Bug: online_softmax_combine shifts by the combined maximum itself, with no guard for an empty row (m = -inf), so combining two empty states computes exp(-inf - (-inf)) = NaN instead of staying the empty state.
import torch


def _shift(m):
    # A row that has seen only -inf keeps m = -inf. Shifting it by 0 instead keeps
    # exp(-inf - 0) = 0, where exp(-inf - (-inf)) would be NaN.
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def online_softmax_update(m, l, block):
    if block.shape[-1] == 0:
        return m.clone(), l.clone()  # nothing new: the same state, in tensors of its own
    m_new = torch.maximum(m, block.amax(dim=-1))
    shift = _shift(m_new)
    # The old sum was taken relative to m; relative to m_new each of its terms shrinks by
    # exp(m - m_new) <= 1. Every exponent is <= 0, so nothing overflows.
    l_new = l * torch.exp(m - shift) + torch.exp(block - shift[:, None]).sum(dim=-1)
    return m_new, l_new


def online_softmax_combine(m_a, l_a, m_b, l_b):
    # Two partial states over disjoint sets of columns: rescale both to the larger maximum.
    m = torch.maximum(m_a, m_b)
    shift = m
    return m, l_a * torch.exp(m_a - shift) + l_b * torch.exp(m_b - shift)


def online_logsumexp(blocks):
    first = blocks[0]
    # The empty state: nothing seen, maximum -inf and sum 0 (the identity of combine).
    m = torch.full(first.shape[:-1], float("-inf"), dtype=first.dtype, device=first.device)
    l = torch.zeros_like(m)
    for block in blocks:
        m, l = online_softmax_update(m, l, block)
    # log(0) = -inf: a row of nothing but -inf has logsumexp -inf, as log(sum(exp(x))) says.
    return _shift(m) + torch.log(l)


def online_softmax_probs(m, l, block):
    shift = _shift(m)
    # l >= 1 whenever the row has a finite value (its maximum contributes exp(0) = 1); an
    # all -inf row has l = 0 and a zero numerator, and comes out as zeros, not NaN.
    tiny = torch.finfo(l.dtype).tiny
    return torch.exp(block - shift[:, None]) / l.clamp_min(tiny)[:, None]
