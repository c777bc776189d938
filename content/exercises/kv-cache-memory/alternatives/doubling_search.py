# Style: max_batch by doubling and bisection on kv_cache_bytes
"""max_batch found by search on kv_cache_bytes itself (exponential, then bisection), so it
agrees with the byte count by construction."""


def cached_tokens(seq_len, block_size=1):
    if seq_len < 0 or block_size < 1:
        raise ValueError("need seq_len >= 0 and block_size >= 1")
    full, rest = divmod(seq_len, block_size)
    return seq_len if rest == 0 else (full + 1) * block_size


def kv_cache_bytes(
    num_layers, num_kv_heads, head_dim, seq_len, batch, bytes_per_value, block_size=1
):
    if min(num_layers, num_kv_heads, head_dim, bytes_per_value) < 1 or batch < 0:
        raise ValueError("sizes must be >= 1 and batch >= 0")
    per_layer_per_token = 2 * num_kv_heads * head_dim * bytes_per_value
    return num_layers * per_layer_per_token * batch * cached_tokens(seq_len, block_size)


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
    if memory_bytes < 0 or weight_bytes < 0 or seq_len < 1:
        raise ValueError("memory_bytes, weight_bytes >= 0 and seq_len >= 1")

    def fits(b):
        cache = kv_cache_bytes(
            num_layers, num_kv_heads, head_dim, seq_len, b, bytes_per_value, block_size
        )
        return weight_bytes + cache <= memory_bytes

    if not fits(0):
        return 0
    high = 1
    while fits(high):
        high *= 2
    low = high // 2  # fits(low), not fits(high)
    while high - low > 1:
        mid = (low + high) // 2
        if fits(mid):
            low = mid
        else:
            high = mid
    return low


if __name__ == "__main__":
    assert kv_cache_bytes(32, 8, 128, 8192, 1, 2) == 2**30
    assert max_batch(80 * 2**30, 16_060_000_000, 32, 8, 128, 8192, 2) == 65
    print("ok")
