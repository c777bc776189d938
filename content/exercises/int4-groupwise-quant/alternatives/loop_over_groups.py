# Style: a loop over the groups (vectorised over rows), packing with integer arithmetic.
import torch


def quantize(w, group_size):
    out_features, in_features = w.shape
    if group_size <= 0 or group_size % 2 != 0 or in_features % group_size != 0:
        raise ValueError("group_size must be even and divide the number of input columns")
    n_groups = in_features // group_size
    codes = torch.empty(out_features, in_features, dtype=torch.int64)
    scales = torch.empty(out_features, n_groups, dtype=w.dtype)
    zeros = torch.empty(out_features, n_groups, dtype=torch.int64)
    zero = torch.zeros((), dtype=w.dtype)
    for g in range(n_groups):
        cols = slice(g * group_size, (g + 1) * group_size)
        block = w[:, cols]
        lo = torch.minimum(block.min(dim=1).values, zero)
        hi = torch.maximum(block.max(dim=1).values, zero)
        scale = (hi - lo) / 15
        empty = scale == 0
        divisor = scale.masked_fill(empty, 1.0)
        zp = torch.clamp(torch.round(-lo / divisor), 0, 15).masked_fill(empty, 0)
        q = torch.round(block / divisor.unsqueeze(1)) + zp.unsqueeze(1)
        codes[:, cols] = q.clamp(0, 15).long()
        scales[:, g] = divisor
        zeros[:, g] = zp.long()
    packed = (codes[:, 0::2] + 16 * codes[:, 1::2]).to(torch.uint8)
    return packed, scales, zeros.to(torch.uint8)


def dequantize(packed, scales, zeros, group_size):
    b = packed.long()
    codes = torch.empty(packed.shape[0], 2 * packed.shape[1], dtype=torch.int64)
    codes[:, 0::2] = b % 16
    codes[:, 1::2] = b // 16
    per_col_zero = zeros.long().repeat_interleave(group_size, dim=1)
    per_col_scale = scales.repeat_interleave(group_size, dim=1)
    return (codes - per_col_zero).to(scales.dtype) * per_col_scale
