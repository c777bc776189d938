# Style: a Python loop over the sequences, each one's blocks concatenated, then SDPA.
import torch
import torch.nn.functional as F


def paged_attention(q, k_cache, v_cache, block_tables, seq_lens):
    block_size = k_cache.shape[1]
    group = q.shape[1] // k_cache.shape[2]
    outs = []
    for b in range(q.shape[0]):
        n = int(seq_lens[b])
        used = block_tables[b, : (n + block_size - 1) // block_size]  # padding never touched
        k = k_cache[used].flatten(0, 1)[:n]  # (n, Hkv, D), logical order
        v = v_cache[used].flatten(0, 1)[:n]
        k = k.transpose(0, 1).repeat_interleave(group, dim=0)  # (H, n, D)
        v = v.transpose(0, 1).repeat_interleave(group, dim=0)
        out = F.scaled_dot_product_attention(q[b][:, None, :], k, v)  # (H, 1, D)
        outs.append(out[:, 0])
    return torch.stack(outs)


def append_slots(block_tables, seq_lens, free_blocks, block_size):
    tables = block_tables.clone()
    slots = torch.empty_like(seq_lens)
    next_free = 0
    for b in range(seq_lens.shape[0]):
        n = int(seq_lens[b])
        if n % block_size == 0:  # last block full, or no block yet
            tables[b, n // block_size] = free_blocks[next_free]
            next_free += 1
        slots[b] = tables[b, n // block_size] * block_size + n % block_size
    return tables, slots
