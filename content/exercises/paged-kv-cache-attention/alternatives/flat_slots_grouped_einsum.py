# Style: flat slot indices into a (num_blocks * block_size) view, grouped heads kept apart.
import math

import torch

__all__ = ["append_slots", "paged_attention"]


def _slot_indices(block_tables, seq_lens, block_size):
    """(B, L) flat indices block * block_size + offset, and the mask of real tokens."""
    longest = int(seq_lens.max().item())
    pos = torch.arange(longest, device=block_tables.device)
    mask = pos.unsqueeze(0) < seq_lens.unsqueeze(1)
    logical = (pos // block_size).clamp(max=block_tables.shape[1] - 1)
    blocks = block_tables[:, logical].clamp(min=0)
    flat = blocks * block_size + pos % block_size
    return torch.where(mask, flat, torch.zeros_like(flat)), mask


def paged_attention(q, k_cache, v_cache, block_tables, seq_lens):
    nb, bs, kv_heads, dim = k_cache.shape
    batch, heads, _ = q.shape
    flat, mask = _slot_indices(block_tables, seq_lens, bs)
    k = k_cache.reshape(nb * bs, kv_heads, dim)[flat]  # (B, L, Hkv, D)
    v = v_cache.reshape(nb * bs, kv_heads, dim)[flat]
    v = torch.where(mask[:, :, None, None], v, torch.zeros((), dtype=v.dtype))
    qg = q.reshape(batch, kv_heads, heads // kv_heads, dim)  # consecutive heads share a kv head
    scores = torch.einsum("bkgd,blkd->bkgl", qg, k) * (1.0 / math.sqrt(dim))
    scores = torch.where(mask[:, None, None, :], scores, torch.tensor(float("-inf"), dtype=q.dtype))
    out = torch.einsum("bkgl,blkd->bkgd", torch.softmax(scores, dim=-1), v)
    return out.reshape(batch, heads, dim)


def append_slots(block_tables, seq_lens, free_blocks, block_size):
    logical = seq_lens // block_size
    offset = seq_lens % block_size
    fresh = offset == 0
    # The k-th sequence needing a block (in batch order) takes free_blocks[k].
    rank = torch.cumsum(fresh.long(), dim=0) - 1
    current = block_tables.gather(1, logical.unsqueeze(1)).squeeze(1)
    if bool(fresh.any()):
        handed = free_blocks[rank.clamp(min=0).clamp(max=free_blocks.numel() - 1)]
        current = torch.where(fresh, handed, current)
    tables = block_tables.scatter(1, logical.unsqueeze(1), current.unsqueeze(1))
    return tables, current * block_size + offset
