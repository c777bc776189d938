# Style: a 2x2 rotation matrix per (position, pair) applied with einsum; tables from a class.
import torch


class RopeScaling:
    """The scaled frequencies of one head size, base and scaling."""

    def __init__(self, head_dim, base=10000.0, scale=1.0, ntk_alpha=1.0):
        self.head_dim = head_dim
        self.scale = scale
        self.base = base * ntk_alpha ** (head_dim / (head_dim - 2))

    def angles(self, positions):
        idx = torch.arange(self.head_dim // 2, dtype=torch.float64, device=positions.device)
        freqs = torch.pow(torch.full_like(idx, self.base), -2.0 * idx / self.head_dim)
        return positions.to(torch.float64).unsqueeze(1) / self.scale * freqs.unsqueeze(0)


def rope_tables(positions, head_dim, base=10000.0, scale=1.0, ntk_alpha=1.0):
    a = RopeScaling(head_dim, base, scale, ntk_alpha).angles(positions)
    return torch.cos(a), torch.sin(a)


def apply_rope(x, cos, sin):
    c, s = cos.to(x.dtype), sin.to(x.dtype)
    rot = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (T, h, 2, 2)
    pairs = x.unflatten(-1, (-1, 2))  # (..., T, h, 2)
    return torch.einsum("thij,...thj->...thi", rot, pairs).flatten(-2)


if __name__ == "__main__":
    cos, sin = rope_tables(torch.tensor([0, 1]), 4)
    print(apply_rope(torch.tensor([[[[1.0, 0.0, 1.0, 0.0], [1.0, 0.0, 1.0, 0.0]]]]), cos, sin))
