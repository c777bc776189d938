# Bug: dequantize subtracts the zero point from the codes while both are still uint8 and converts afterwards, so every code below its zero point wraps around to code - zero + 256 instead of a negative number.
import torch


def quantize(w, group_size):
    rows, cols = w.shape
    if group_size % 2 or cols % group_size:
        raise ValueError(f"group_size {group_size} must be even and divide {cols} columns")
    groups = w.reshape(rows, cols // group_size, group_size)
    # The range always contains 0, so that 0 is exactly representable (zero point in 0..15).
    lo = groups.amin(dim=2).clamp(max=0)
    hi = groups.amax(dim=2).clamp(min=0)
    scales = (hi - lo) / 15
    # An all-zero group would divide 0 by 0: give it scale 1, so its codes and zero point are 0.
    scales = torch.where(scales > 0, scales, torch.ones_like(scales))
    # -lo / scale lies in [0, 15] already, and round is monotone and odd, so the codes are
    # never below 0; only the top can overflow (a tie rounded up on both sides gives 16).
    zeros = torch.round(-lo / scales)
    codes = (torch.round(groups / scales[..., None]) + zeros[..., None]).clamp(max=15)
    codes = codes.to(torch.uint8).reshape(rows, cols)
    # Column 2j in the low nibble, column 2j + 1 in the high nibble.
    packed = codes[:, 0::2] | (codes[:, 1::2] << 4)
    return packed, scales, zeros.to(torch.uint8)


def dequantize(packed, scales, zeros, group_size):
    codes = torch.stack([packed & 0x0F, packed >> 4], dim=2).flatten(1)
    rows, cols = codes.shape
    # Into float before subtracting: uint8 arithmetic would wrap below the zero point.
    q = codes.reshape(rows, cols // group_size, group_size)
    out = (q - zeros[..., None]).to(scales.dtype) * scales[..., None]
    return out.reshape(rows, cols)
