import torch


def quantize(w: torch.Tensor, group_size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Asymmetric int4 quantisation of w per row and group of group_size columns.

    w: (out, in), float32 or float64. group_size: even, dividing in (else ValueError).
    Returns (packed, scales, zeros):
      packed: uint8 (out, in // 2), column 2j in the low nibble, 2j + 1 in the high nibble;
      scales: (out, in // group_size), w's dtype (1 for an all-zero group);
      zeros:  uint8 (out, in // group_size), the zero points, in 0..15.
    """
    raise NotImplementedError


def dequantize(
    packed: torch.Tensor, scales: torch.Tensor, zeros: torch.Tensor, group_size: int
) -> torch.Tensor:
    """(code - zero) * scale for every weight: (out, in) in scales' dtype."""
    raise NotImplementedError
