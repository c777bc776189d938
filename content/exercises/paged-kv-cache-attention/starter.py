import torch


def paged_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    block_tables: torch.Tensor,
    seq_lens: torch.Tensor,
) -> torch.Tensor:
    """One decoding step of attention over a paged KV cache.

    q: (B, H, D), the query of each sequence's new token.
    k_cache, v_cache: (num_blocks, block_size, Hkv, D), H a multiple of Hkv.
    block_tables: int64 (B, max_blocks); token i of sequence b is in block
        block_tables[b, i // block_size], slot i % block_size.
    seq_lens: int64 (B,), each in 1 .. max_blocks * block_size.
    Returns (B, H, D) in q's dtype: softmax(q k^T / sqrt(D)) v over the first seq_lens[b]
    tokens of sequence b, query head h reading kv head h // (H // Hkv).
    """
    raise NotImplementedError


def append_slots(
    block_tables: torch.Tensor, seq_lens: torch.Tensor, free_blocks: torch.Tensor, block_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Where the next token of every sequence goes, allocating blocks as needed.

    block_tables: int64 (B, max_blocks); seq_lens: int64 (B,), each >= 0, the tokens already
    stored; free_blocks: int64 (F,), the free physical blocks in the order they are handed out.
    Returns (new_tables, slot_mapping): a new (B, max_blocks) table where each sequence whose
    seq_len is a multiple of block_size got the next free block as block seq_len // block_size
    (in batch order), and int64 (B,) slots block * block_size + seq_len % block_size.
    """
    raise NotImplementedError
