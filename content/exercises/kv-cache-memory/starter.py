def cached_tokens(seq_len: int, block_size: int = 1) -> int:
    """Token slots one sequence of seq_len tokens holds: seq_len rounded up to a multiple of
    block_size (block_size=1: no paging)."""
    raise NotImplementedError


def kv_cache_bytes(
    num_layers: int,
    num_kv_heads: int,
    head_dim: int,
    seq_len: int,
    batch: int,
    bytes_per_value: int,
    block_size: int = 1,
) -> int:
    """Bytes of the key/value cache of `batch` sequences of seq_len tokens each."""
    raise NotImplementedError


def max_batch(
    memory_bytes: int,
    weight_bytes: int,
    num_layers: int,
    num_kv_heads: int,
    head_dim: int,
    seq_len: int,
    bytes_per_value: int,
    block_size: int = 1,
) -> int:
    """The largest batch whose weights plus KV cache fit in memory_bytes (0 if none)."""
    raise NotImplementedError
