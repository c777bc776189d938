# Style: a 256-entry unpacking table for dequantize, codes packed via a (.., 2) view; self-test.
import torch

__all__ = ["dequantize", "quantize"]

_BYTE = torch.arange(256)
_NIBBLES = torch.stack([_BYTE % 16, _BYTE // 16], dim=1)  # byte -> (low, high)


def quantize(w, group_size):
    rows, cols = w.shape
    if group_size % 2 == 1 or cols % group_size != 0:
        raise ValueError(f"cannot split {cols} columns into even groups of {group_size}")
    g = w.reshape(rows, -1, group_size)
    lo = torch.clamp(g.amin(-1), max=0.0)
    hi = torch.clamp(g.amax(-1), min=0.0)
    scales = (hi - lo) / 15
    nonzero = scales != 0
    denom = scales.clone()
    denom[~nonzero] = 1
    zeros = (-lo / denom).round().clamp(0, 15)
    zeros[~nonzero] = 0
    codes = ((g / denom[..., None]).round() + zeros[..., None]).clamp(0, 15).to(torch.uint8)
    pairs = codes.reshape(rows, cols // 2, 2)  # (low, high) of each byte
    packed = pairs[..., 0] + pairs[..., 1] * 16  # uint8, never above 255
    return packed, denom, zeros.to(torch.uint8)


def dequantize(packed, scales, zeros, group_size):
    rows = packed.shape[0]
    codes = _NIBBLES.to(packed.device)[packed.long()].reshape(rows, -1, group_size)
    centred = codes.to(scales.dtype) - zeros[..., None].to(scales.dtype)
    return (centred * scales[..., None]).reshape(rows, -1)


if __name__ == "__main__":
    w = torch.tensor([[0.0, 0.2, -0.4, 1.1, 0.0, 0.0, 0.0, 0.0]])
    p, s, z = quantize(w, 4)
    print(p, s, z, dequantize(p, s, z, 4), sep="\n")
