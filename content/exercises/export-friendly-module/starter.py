import torch
from torch import nn


class SentencePooler(nn.Module):
    """Mean of the valid tokens' vectors, L2-normalised; `empty` for a row with none.

    forward(hidden (B, T, D) float32 or float64, mask (B, T) bool) -> (B, D), hidden's dtype.
    Rewrite forward with tensor operations only, so that torch.export captures it as one
    graph with dynamic B and T; the values must stay the same.
    """

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.empty = nn.Parameter(torch.zeros(dim))

    def forward(self, hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        rows = []
        for b in range(hidden.shape[0]):
            n = int(mask[b].sum().item())
            if n == 0:  # noqa: SIM108
                v = self.empty.to(hidden.dtype)
            else:
                v = hidden[b][mask[b]].sum(dim=0) / n
            norm = v.norm().item()
            if norm > 0:
                v = v / norm
            rows.append(v)
        return torch.stack(rows)
