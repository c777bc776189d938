# Bug: append_slots hands sequence b the free block free_blocks[b] (its position in the batch) instead of the next unused one from the front, so blocks are skipped or handed out twice when not every sequence needs one.
import math

import torch


def paged_attention(q, k_cache, v_cache, block_tables, seq_lens):
    batch, heads, dim = q.shape
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    longest = int(seq_lens.max())

    # Logical token i of each sequence, and whether it exists (i < seq_len).
    pos = torch.arange(longest, device=q.device)
    valid = pos[None, :] < seq_lens[:, None]  # (B, L)

    # Physical block of each token, whole blocks at a time as a kernel reads them. Entries
    # of the table past a sequence's last block are padding (-1, or anything): they are
    # replaced by block 0 before indexing, and the tokens they give are masked out below.
    logical = (pos // block_size).expand(batch, longest)
    owned = logical < ((seq_lens + block_size - 1) // block_size)[:, None]
    blocks = torch.where(owned, block_tables.gather(1, logical), 0)
    slots = (pos % block_size).expand(batch, longest)

    # (B, Hkv, L, D): each sequence's keys and values in logical order. The tail of a
    # sequence's last block may hold NaN or inf: a zero weight times NaN is still NaN, so the
    # values themselves are zeroed, not only their weights.
    keys = k_cache[blocks, slots].transpose(1, 2)
    vals = v_cache[blocks, slots].transpose(1, 2)
    vals = vals.masked_fill(~valid[:, None, :, None], 0.0)

    # Grouped-query attention: query heads g * group .. (g + 1) * group - 1 share kv head g.
    # Viewed as (B, Hkv, group, D), one matmul serves a whole group without copying the keys.
    grouped = q.reshape(batch, kv_heads, heads // kv_heads, dim)
    scores = grouped @ keys.transpose(2, 3) / math.sqrt(dim)  # (B, Hkv, group, L)
    scores = scores.masked_fill(~valid[:, None, None, :], float("-inf"))
    out = scores.softmax(dim=-1) @ vals  # (B, Hkv, group, D)
    return out.reshape(batch, heads, dim)


def append_slots(block_tables, seq_lens, free_blocks, block_size):
    # The new token of sequence b is its token number seq_lens[b].
    pos = seq_lens
    logical = pos // block_size
    # A sequence whose last block is full (or that has none yet) needs a fresh block; they
    # take the free list's blocks from the front, in batch order.
    needs = pos % block_size == 0
    rows = needs.nonzero().squeeze(1)
    tables = block_tables.clone()  # the caller's table is left as it was
    tables[rows, logical[rows]] = free_blocks[rows]
    physical = tables.gather(1, logical[:, None]).squeeze(1)
    return tables, physical * block_size + pos % block_size
