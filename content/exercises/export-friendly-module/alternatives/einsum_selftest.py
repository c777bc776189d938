# Style: einsum for the masked sum, arithmetic blend instead of where; __main__ self-test.
import torch
from torch import nn


class SentencePooler(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.empty = nn.Parameter(torch.zeros(dim))

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        w = mask.to(hidden.dtype)
        n = w.sum(dim=-1, keepdim=True)  # (B, 1)
        mean = torch.einsum("bt,btd->bd", w, hidden) / torch.maximum(n, torch.ones_like(n))
        some = (n > 0).to(hidden.dtype)
        # some is exactly 0 or 1, so the blend picks one side with no rounding.
        pooled = some * mean + (1 - some) * self.empty.to(hidden.dtype)
        norm = pooled.norm(dim=-1, keepdim=True)
        return pooled / (norm + (norm == 0).to(hidden.dtype))


if __name__ == "__main__":
    pooler = SentencePooler(2)
    h = torch.randn(3, 4, 2)
    m = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0], [1, 0, 1, 1]], dtype=torch.bool)
    batch, tokens = torch.export.Dim("batch"), torch.export.Dim("tokens")
    program = torch.export.export(pooler, (h, m), dynamic_shapes=({0: batch, 1: tokens},) * 2)
    print(program.module()(h[:2], m[:2]), pooler(h[:2], m[:2]))
