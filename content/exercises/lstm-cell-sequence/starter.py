import torch


def lstm_cell(
    x: torch.Tensor,
    h: torch.Tensor,
    c: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """One step. x: (B, I); h, c: (B, H); w_ih: (4H, I); w_hh: (4H, H); b_ih, b_hh: (4H,),
    gates in the order input, forget, cell, output. Returns (h', c'), each (B, H)."""
    raise NotImplementedError


def lstm(
    x: torch.Tensor,
    h0: torch.Tensor,
    c0: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """x: (B, T, I); h0, c0: (B, H). Returns output (B, T, H) and (h_n, c_n), each (B, H)."""
    raise NotImplementedError
