# Style: math.prod and a keyword-argument validator
import math

__all__ = ["cached_tokens", "kv_cache_bytes", "max_batch"]


def _at_least(minimum, **named):
    for name, value in named.items():
        if value < minimum:
            raise ValueError(f"{name}={value} is below {minimum}")


def cached_tokens(seq_len, block_size=1):
    _at_least(0, seq_len=seq_len)
    _at_least(1, block_size=block_size)
    return (seq_len + block_size - 1) // block_size * block_size


def kv_cache_bytes(
    num_layers, num_kv_heads, head_dim, seq_len, batch, bytes_per_value, block_size=1
):
    _at_least(
        1,
        num_layers=num_layers,
        num_kv_heads=num_kv_heads,
        head_dim=head_dim,
        bytes_per_value=bytes_per_value,
    )
    _at_least(0, batch=batch)
    slots = cached_tokens(seq_len, block_size)
    return math.prod((2, num_layers, num_kv_heads, head_dim, bytes_per_value, slots, batch))


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
    _at_least(0, memory_bytes=memory_bytes, weight_bytes=weight_bytes)
    _at_least(1, seq_len=seq_len)
    one = kv_cache_bytes(
        num_layers, num_kv_heads, head_dim, seq_len, 1, bytes_per_value, block_size
    )
    return max(0, (memory_bytes - weight_bytes) // one)
