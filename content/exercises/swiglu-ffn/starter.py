import torch


def swiglu_hidden_size(d_model: int, multiple_of: int) -> int:
    """The hidden width of a SwiGLU block: floor(8 * d_model / 3), rounded up to a
    multiple of `multiple_of`. Returns a Python int."""
    raise NotImplementedError


def swiglu_ffn(
    x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor
) -> torch.Tensor:
    """x: (..., d_model); w_gate, w_up: (hidden, d_model); w_down: (d_model, hidden).

    Returns (silu(x w_gate^T) * (x w_up^T)) w_down^T, of shape (..., d_model).
    """
    raise NotImplementedError
