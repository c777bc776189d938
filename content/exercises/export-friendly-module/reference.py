import torch
from torch import nn


class SentencePooler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.empty = nn.Parameter(torch.zeros(dim))

    def forward(self, hidden, mask):
        # Masked sum over tokens as one multiply and reduce: no Python loop over the batch
        # (which export would unroll for one batch size), no boolean indexing (whose output
        # shape depends on the data).
        weights = mask.unsqueeze(-1).to(hidden.dtype)  # (B, T, 1)
        count = weights.sum(dim=1)  # (B, 1)
        # clamp_min(1): an all-masked row divides 0 by 1 instead of 0 by 0, and its value is
        # replaced below anyway; both sides of a where are computed for every row.
        mean = (hidden * weights).sum(dim=1) / count.clamp_min(1)
        pooled = torch.where(count > 0, mean, self.empty.to(hidden.dtype))
        norm = torch.linalg.vector_norm(pooled, dim=-1, keepdim=True)
        # A zero vector has no direction: it stays zero rather than becoming 0 / 0.
        return pooled / torch.where(norm > 0, norm, torch.ones_like(norm))
