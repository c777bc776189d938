# Style: a frozen dataclass describing the cache layout
from dataclasses import dataclass


@dataclass(frozen=True)
class CacheLayout:
    num_layers: int
    num_kv_heads: int
    head_dim: int
    bytes_per_value: int
    block_size: int = 1

    def __post_init__(self):
        for name in ("num_layers", "num_kv_heads", "head_dim", "bytes_per_value", "block_size"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")

    @property
    def bytes_per_slot(self):
        # K and V, each (kv_heads, head_dim) per layer.
        return 2 * self.num_layers * self.num_kv_heads * self.head_dim * self.bytes_per_value

    def slots(self, seq_len):
        if seq_len < 0:
            raise ValueError("seq_len must be >= 0")
        blocks, partial = divmod(seq_len, self.block_size)
        return (blocks + (partial > 0)) * self.block_size

    def sequence_bytes(self, seq_len):
        return self.bytes_per_slot * self.slots(seq_len)


def cached_tokens(seq_len, block_size=1):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    return CacheLayout(1, 1, 1, 1, block_size).slots(seq_len)


def kv_cache_bytes(
    num_layers, num_kv_heads, head_dim, seq_len, batch, bytes_per_value, block_size=1
):
    layout = CacheLayout(num_layers, num_kv_heads, head_dim, bytes_per_value, block_size)
    if batch < 0:
        raise ValueError("batch must be >= 0")
    return layout.sequence_bytes(seq_len) * batch


def max_batch(
    memory_bytes,
    weight_bytes,
    num_layers,
    num_kv_heads,
    head_dim,
    seq_len,
    bytes_per_value,
    block_size=1,
):
    if memory_bytes < 0 or weight_bytes < 0:
        raise ValueError("memory_bytes and weight_bytes must be >= 0")
    if seq_len < 1:
        raise ValueError("seq_len must be >= 1 in max_batch")
    layout = CacheLayout(num_layers, num_kv_heads, head_dim, bytes_per_value, block_size)
    free = memory_bytes - weight_bytes
    return free // layout.sequence_bytes(seq_len) if free > 0 else 0
