import torch


def online_softmax_update(
    m: torch.Tensor, l: torch.Tensor, block: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Fold the next block of columns into the running state.

    m: (R,) running maximum of each row so far (-inf when nothing finite was seen).
    l: (R,) running sum of exp(x - m) over the columns seen so far.
    block: (R, C) the next C columns (C may be 0); finite values or -inf.
    Returns the new (m, l), each (R,).
    """
    raise NotImplementedError


def online_softmax_combine(
    m_a: torch.Tensor, l_a: torch.Tensor, m_b: torch.Tensor, l_b: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The state of the union of two disjoint sets of columns, from their two states.
    Each argument is (R,). Returns (m, l), each (R,)."""
    raise NotImplementedError


def online_logsumexp(blocks: list[torch.Tensor]) -> torch.Tensor:
    """log(sum(exp(row))) of each row of the blocks side by side, reading each block once.

    blocks: a non-empty list of (R, C_i) tensors (C_i may differ, and may be 0).
    Returns (R,); -inf for a row that is -inf everywhere.
    """
    raise NotImplementedError


def online_softmax_probs(m: torch.Tensor, l: torch.Tensor, block: torch.Tensor) -> torch.Tensor:
    """The softmax probabilities of one block, given the final state (m, l) of the whole row.

    m, l: (R,); block: (R, C). Returns (R, C); zeros in a row whose state has l == 0.
    """
    raise NotImplementedError
