import torch


def gru_cell(
    x: torch.Tensor,
    h: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> torch.Tensor:
    """One step. x: (B, I); h: (B, H); w_ih: (3H, I); w_hh: (3H, H); b_ih, b_hh: (3H,),
    gates in the order reset, update, new. Returns h' (B, H)."""
    raise NotImplementedError


def gru_tbptt(
    x: torch.Tensor,
    h0: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
    k: int,
) -> torch.Tensor:
    """x: (B, T, I); h0: (B, H). Returns outputs (B, T, H); the hidden state entering
    step t is detached when t is a positive multiple of k."""
    raise NotImplementedError
