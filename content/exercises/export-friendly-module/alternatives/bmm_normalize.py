# Style: the masked sum as a batched matmul, F.normalize for the unit norm.
import torch
import torch.nn.functional as F
from torch import nn


class SentencePooler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.empty = nn.Parameter(torch.zeros(dim))

    def forward(self, hidden, mask):
        w = mask.to(hidden.dtype)  # (B, T)
        summed = torch.bmm(w.unsqueeze(1), hidden).squeeze(1)  # (B, D)
        count = w.sum(dim=1, keepdim=True)
        has_tokens = count > 0
        mean = summed / torch.where(has_tokens, count, torch.ones_like(count))
        pooled = torch.where(has_tokens, mean, self.empty.to(hidden.dtype).expand_as(mean))
        # F.normalize divides by max(norm, eps): a zero row stays zero.
        return F.normalize(pooled, p=2.0, dim=-1)
