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
