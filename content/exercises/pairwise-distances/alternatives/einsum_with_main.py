# Style: einsum for the cross terms, vector_norm for the norms, centred on y's mean; a
# self-test block.
import torch

__all__ = ["pairwise_sq_dists"]


def pairwise_sq_dists(x, y):
    shift = y.mean(dim=0, keepdim=True)  # any common point works; NaN only when M = 0
    a, b = x - shift, y - shift
    aa = torch.linalg.vector_norm(a, dim=1) ** 2
    bb = torch.linalg.vector_norm(b, dim=1) ** 2
    ab = torch.einsum("nd,md->nm", a, b)
    return torch.clamp(aa.unsqueeze(1) - 2 * ab + bb.unsqueeze(0), min=0)


if __name__ == "__main__":
    x = torch.tensor([[0.0, 0.0], [1.0, 2.0], [3.0, -1.0]])
    y = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    print(pairwise_sq_dists(x, y))
    slow = ((x[:, None] - y[None]) ** 2).sum(-1)
    assert torch.allclose(pairwise_sq_dists(x, y), slow)
