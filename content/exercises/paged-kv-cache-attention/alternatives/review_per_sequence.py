# Style: review solution from the statement alone; a Python loop over sequences, each gathering its used blocks, trimming to seq_len and expanding kv heads with repeat_interleave; append_slots as a loop with a free-list cursor.
import math

import torch


def paged_attention(q, k_cache, v_cache, block_tables, seq_lens):
    B, H, D = q.shape
    _, block_size, Hkv, _ = k_cache.shape
    group = H // Hkv
    out = torch.empty_like(q)
    scale = 1.0 / math.sqrt(D)
    for b in range(B):
        n = int(seq_lens[b])
        n_blocks = -(-n // block_size)
        blocks = block_tables[b, :n_blocks]
        # gather only the used blocks, then trim the tail of the last one
        k = k_cache[blocks].reshape(-1, Hkv, D)[:n]  # (n, Hkv, D)
        v = v_cache[blocks].reshape(-1, Hkv, D)[:n]
        k = k.repeat_interleave(group, dim=1)  # (n, H, D)
        v = v.repeat_interleave(group, dim=1)
        scores = torch.einsum("hd,nhd->hn", q[b], k) * scale
        w = torch.softmax(scores, dim=-1)
        out[b] = torch.einsum("hn,nhd->hd", w, v)
    return out


def append_slots(block_tables, seq_lens, free_blocks, block_size):
    tables = block_tables.clone()
    slots = torch.empty(seq_lens.shape[0], dtype=torch.int64)
    next_free = 0
    for b in range(seq_lens.shape[0]):
        n = int(seq_lens[b])
        col = n // block_size
        if n % block_size == 0:
            tables[b, col] = free_blocks[next_free]
            next_free += 1
        blk = int(tables[b, col])
        slots[b] = blk * block_size + n % block_size
    return tables, slots.to(block_tables.device)
