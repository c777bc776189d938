# Style: masked_fill for the padding, sum of squares and rsqrt for the norm, float64 inside.
import torch
from torch import nn

__all__ = ["SentencePooler"]


class SentencePooler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.empty = nn.Parameter(torch.zeros(dim))

    def forward(self, hidden, mask):
        x = hidden.to(torch.float64)
        valid = mask.unsqueeze(-1)
        total = x.masked_fill(~valid, 0.0).sum(dim=1)
        count = valid.sum(dim=1).to(torch.float64)
        pooled = torch.where(
            valid.any(dim=1), total / count.clamp(min=1.0), self.empty.to(torch.float64)
        )
        squared = (pooled * pooled).sum(dim=-1, keepdim=True)
        inverse = torch.where(squared > 0, torch.rsqrt(squared.clamp(min=1e-300)), 1.0)
        return (pooled * inverse).to(hidden.dtype)
