# Style: one block at a time with a running max and sum (flash-decoding), float64 inside.
import math

import torch


def paged_attention(q, k_cache, v_cache, block_tables, seq_lens):
    batch, heads, dim = q.shape
    block_size, kv_heads = k_cache.shape[1], k_cache.shape[2]
    group = heads // kv_heads
    out = torch.empty(batch, heads, dim, dtype=torch.float64)
    for b in range(batch):
        n = int(seq_lens[b])
        qb = q[b].double() / math.sqrt(dim)  # (H, D)
        run_max = torch.full((heads,), float("-inf"), dtype=torch.float64)
        run_sum = torch.zeros(heads, dtype=torch.float64)
        acc = torch.zeros(heads, dim, dtype=torch.float64)
        for j in range((n + block_size - 1) // block_size):
            take = min(block_size, n - j * block_size)  # the last block may be partial
            blk = int(block_tables[b, j])
            k = k_cache[blk, :take].double().repeat_interleave(group, dim=1)  # (t, H, D)
            v = v_cache[blk, :take].double().repeat_interleave(group, dim=1)
            s = torch.einsum("hd,thd->ht", qb, k)
            new_max = torch.maximum(run_max, s.max(dim=1).values)
            fix = torch.exp(run_max - new_max)
            p = torch.exp(s - new_max[:, None])
            run_sum = run_sum * fix + p.sum(dim=1)
            acc = acc * fix[:, None] + torch.einsum("ht,thd->hd", p, v)
            run_max = new_max
        out[b] = acc / run_sum[:, None]
    return out.to(q.dtype)


def append_slots(block_tables, seq_lens, free_blocks, block_size):
    """Plain Python lists: a free-list pointer, one sequence after another."""
    rows = block_tables.tolist()
    free = iter(free_blocks.tolist())
    slot_list = []
    for row, n in zip(rows, seq_lens.tolist(), strict=True):
        block_index, offset = divmod(n, block_size)
        if offset == 0:
            row[block_index] = next(free)
        slot_list.append(row[block_index] * block_size + offset)
    return torch.tensor(rows, dtype=torch.int64), torch.tensor(slot_list, dtype=torch.int64)


if __name__ == "__main__":
    kc = torch.randn(4, 2, 1, 3)
    print(paged_attention(torch.randn(1, 2, 3), kc, kc, torch.tensor([[3, 1]]), torch.tensor([3])))
