# Style: a small quantiser class, torch.aminmax on a 3-D view, int32 bit operations.
import torch


class GroupInt4:
    LEVELS = 15

    def __init__(self, group_size):
        if group_size % 2:
            raise ValueError("group_size must be even")
        self.g = group_size

    def groups(self, x):
        if x.shape[1] % self.g:
            raise ValueError("group_size must divide the number of columns")
        return (
            x.view(x.shape[0], -1, self.g)
            if x.is_contiguous()
            else x.reshape(x.shape[0], -1, self.g)
        )

    def quantize(self, w):
        grouped = self.groups(w)
        mn, mx = torch.aminmax(grouped, dim=2)
        mn, mx = mn.clamp(max=0), mx.clamp(min=0)
        scale = (mx - mn) / self.LEVELS
        ok = scale != 0
        div = torch.where(ok, scale, 1)
        zp = torch.where(ok, (-mn / div).round().clamp(0, self.LEVELS), 0)
        q = (grouped / div.unsqueeze(-1)).round().add(zp.unsqueeze(-1)).clamp(0, self.LEVELS)
        q = q.to(torch.int32).flatten(1)
        packed = (q[:, ::2] | (q[:, 1::2] << 4)).to(torch.uint8)
        return packed, div, zp.to(torch.uint8)

    def dequantize(self, packed, scales, zeros):
        p = packed.to(torch.int32)
        codes = torch.stack((p & 0xF, (p >> 4) & 0xF), dim=2).flatten(1)
        grouped = self.groups(codes).to(scales.dtype)
        shifted = grouped - zeros.to(scales.dtype).unsqueeze(-1)
        return (shifted * scales.unsqueeze(-1)).flatten(1)


def quantize(w, group_size):
    return GroupInt4(group_size).quantize(w)


def dequantize(packed, scales, zeros, group_size):
    return GroupInt4(group_size).dequantize(packed, scales, zeros)
