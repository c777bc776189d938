# Bug: cached_tokens rounds up with math.ceil(seq_len / block_size), a float division, which is off by one block once seq_len passes 2^53 (the float rounds to a neighbouring integer), so the byte counts of huge caches are wrong.
import math


def _require(name, value, low):
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")


def cached_tokens(seq_len, block_size=1):
    """Token slots held for one sequence: seq_len rounded up to whole blocks."""
    _require("seq_len", seq_len, 0)
    _require("block_size", block_size, 1)
    # Ceiling division in integers: -(-a // b) never goes through a float.
    return math.ceil(seq_len / block_size) * block_size


def kv_cache_bytes(
    num_layers, num_kv_heads, head_dim, seq_len, batch, bytes_per_value, block_size=1
):
    for name, value in (
        ("num_layers", num_layers),
        ("num_kv_heads", num_kv_heads),
        ("head_dim", head_dim),
        ("bytes_per_value", bytes_per_value),
    ):
        _require(name, value, 1)
    _require("batch", batch, 0)
    # One key and one value vector (the 2) per layer, KV head and cached token slot.
    per_token = 2 * num_layers * num_kv_heads * head_dim * bytes_per_value
    return per_token * cached_tokens(seq_len, block_size) * batch


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
    _require("memory_bytes", memory_bytes, 0)
    _require("weight_bytes", weight_bytes, 0)
    # A sequence of no tokens costs nothing, so "the largest batch" would be unbounded.
    _require("seq_len", seq_len, 1)
    per_sequence = kv_cache_bytes(
        num_layers, num_kv_heads, head_dim, seq_len, 1, bytes_per_value, block_size
    )
    free = memory_bytes - weight_bytes
    if free < per_sequence:
        # Also covers weights that do not fit at all (free < 0): no batch is served.
        return 0
    # Floor division on ints stays exact however many bytes there are.
    return free // per_sequence
