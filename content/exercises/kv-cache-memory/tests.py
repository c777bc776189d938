import torch

from sandbox.grading import case, edge, fail, performance, prop, shapes, values

GIB = 2**30


def as_exact(results, what):
    """The learner's answers as an int64 tensor, compared exactly; a float (even 65.0) fails:
    the statement asks for exact integers."""
    for r in results:
        if isinstance(r, bool) or not isinstance(r, int):
            fail(f"{what} returned {type(r).__name__} {r!r}, not an int")
    return torch.tensor(results, dtype=torch.int64)


def model(d):
    """A transformer's cache layout, from tiny to very large."""
    return {
        "num_layers": d.integer(1, 128),
        "num_kv_heads": d.choice([1, 2, 4, 8, 16, 32, 40, 64]),
        "head_dim": d.choice([1, 64, 80, 96, 112, 128, 256]),
        "bytes_per_value": d.choice([1, 2, 4]),
    }


def layout(d):
    """A model, a context length, a batch and a block size."""
    m = model(d)
    return case(
        m["num_layers"],
        m["num_kv_heads"],
        m["head_dim"],
        d.size(0, 40_000),
        d.integer(0, 64),
        m["bytes_per_value"],
        block_size=d.choice([1, 1, 7, 16, 32, 128, 256]),
    )


def trusted_bytes(args, block):
    layers, kv, dim, seq, batch, width = args
    slots = (seq + block - 1) // block * block
    return 2 * layers * kv * dim * width * slots * batch


def bytes_of(sol, c):
    return as_exact([sol.call("kv_cache_bytes", *c.args, **c.kwargs)], "kv_cache_bytes")


def expected_bytes(c):
    return torch.tensor([trusted_bytes(c.args, c.kwargs["block_size"])], dtype=torch.int64)


def token_slots(d):
    """Sequence lengths on, just above and just below block boundaries."""
    block = d.choice([1, 2, 16, 32, 100, 256])
    k = d.integer(0, 50)
    return case(
        [
            0,
            1,
            block - 1,
            block,
            block + 1,
            k * block,
            k * block + 1,
            max(k * block - 1, 0),
            d.integer(0, 100_000),
        ],
        block,
    )


def huge_slots(d):
    """Lengths past 2**53, each a few tokens past a block boundary: a float quotient there is
    not the integer one, so math.ceil(seq_len / block_size) is off by a block."""
    block = d.choice([1, 2, 7, 16, 256])
    lengths = []
    for _ in range(6):
        whole = d.integer(2**53 // block + 1, 2**58 // block)
        lengths.append(whole * block + d.integer(1, block - 1) if block > 1 else 2 * whole + 1)
    return case(lengths, block)


def slots_of(sol, c):
    lengths, block = c.args
    return as_exact([sol.call("cached_tokens", s, block) for s in lengths], "cached_tokens")


def expected_slots(c):
    lengths, block = c.args
    return torch.tensor([-(-s // block) * block for s in lengths], dtype=torch.int64)


def slots_unpaged(sol, c):
    lengths, _ = c.args
    return as_exact([sol.call("cached_tokens", s) for s in lengths], "cached_tokens")


def serving(d, *, room=None, spare=None):
    """A GPU, the weights and a context: `room` whole sequences fit in the free memory, plus
    `spare` bytes (less than one sequence)."""
    m = model(d)
    seq = d.size(1, 32_768)
    block = d.choice([1, 16, 32, 256])
    per_seq = trusted_bytes(
        (m["num_layers"], m["num_kv_heads"], m["head_dim"], seq, 1, m["bytes_per_value"]), block
    )
    weights = d.integer(0, 200) * 10**9 + d.integer(0, 10**9)
    n = room if room is not None else d.integer(0, 300)
    extra = spare if spare is not None else d.integer(0, per_seq - 1)
    memory = weights + n * per_seq + extra
    return case(
        memory,
        weights,
        m["num_layers"],
        m["num_kv_heads"],
        m["head_dim"],
        seq,
        m["bytes_per_value"],
        block_size=block,
        data={"fits": n},
    )


def batch_of(sol, c):
    return as_exact([sol.call("max_batch", *c.args, **c.kwargs)], "max_batch")


def expected_batch(c):
    return torch.tensor([c.data["fits"]], dtype=torch.int64)


def exact_fit(d):
    """The free memory is exactly a whole number of sequences: equality fits."""
    return serving(d, spare=0)


def weights_too_big(d):
    """The weights alone exceed the memory, or leave less than one sequence's cache."""
    c = serving(d, room=0)
    args = list(c.args)
    if d.case % 2 == 0:
        args[0] = d.integer(0, args[1])  # memory <= weights
    return case(*args, block_size=c.kwargs["block_size"], data={"fits": 0})


def beyond_floats(d):
    """A tiny cache per sequence and more than 2**53 sequences' worth of free memory: the
    quotient is past the floats' integers, and the spare bytes are often one short of another
    sequence, where a float division rounds up."""
    layers, kv, dim, width, seq = (
        d.integer(1, 2),
        d.integer(1, 2),
        d.integer(1, 4),
        d.integer(1, 2),
        d.integer(1, 4),
    )
    per_seq = 2 * layers * kv * dim * width * seq
    n = 2 * d.integer(2**52, 2**53 - 1) + 1  # odd: a float quotient here is always even
    spare = per_seq - 1 if d.case % 2 == 0 else d.integer(0, per_seq - 1)
    weights = d.integer(0, 10**12)
    return case(
        weights + n * per_seq + spare,
        weights,
        layers,
        kv,
        dim,
        seq,
        width,
        block_size=1,
        data={"fits": n},
    )


def exactly_one(d):
    """The free memory is exactly one sequence's cache."""
    return serving(d, room=1, spare=0)


def unpaged(d):
    """block_size left out, on odd lengths: no rounding at all."""
    m = model(d)
    seq = 2 * d.integer(0, 7) + 1  # short: rounding to 2 would change the answer
    per_seq = 2 * m["num_layers"] * m["num_kv_heads"] * m["head_dim"] * m["bytes_per_value"] * seq
    weights = d.integer(0, 10**11)
    n = d.integer(1_000, 10**6)
    return case(
        weights + n * per_seq + d.integer(0, per_seq - 1),
        weights,
        m["num_layers"],
        m["num_kv_heads"],
        m["head_dim"],
        seq,
        m["bytes_per_value"],
        data={"fits": n},
    )


def unpaged_sizes(sol, c):
    _memory, _weights, layers, kv, dim, seq, width = c.args
    return as_exact(
        [
            sol.call("kv_cache_bytes", layers, kv, dim, seq, 3, width),
            sol.call("max_batch", *c.args),
        ],
        "a call without block_size",
    )


def expected_unpaged(c):
    _memory, _weights, layers, kv, dim, seq, width = c.args
    return torch.tensor(
        [3 * 2 * layers * kv * dim * width * seq, c.data["fits"]], dtype=torch.int64
    )


def both_functions_agree(sol, c):
    """The batch it returns fits with its own kv_cache_bytes, and one more does not."""
    memory, weights, layers, kv, dim, seq, width = c.args
    block = c.kwargs["block_size"]
    b = sol.call("max_batch", *c.args, block_size=block)
    if isinstance(b, bool) or not isinstance(b, int) or b < 0:
        fail(f"max_batch returned {b!r}, not an int >= 0")
    used = sol.call("kv_cache_bytes", layers, kv, dim, seq, b, width, block_size=block)
    more = sol.call("kv_cache_bytes", layers, kv, dim, seq, b + 1, width, block_size=block)
    if weights + used > memory:
        fail(f"max_batch={b} does not fit: weights + cache = {weights + used} > {memory}")
    if weights + more <= memory:
        fail(f"max_batch={b}, but {b + 1} sequences would fit as well")


def gqa_scales_linearly(sol, c):
    """Halving the KV heads (grouped-query attention) halves the cache; the cache is linear in
    the batch, the layers and the head dimension too."""
    layers, kv, dim, seq, batch, width = c.args
    block = c.kwargs["block_size"]

    def size(**over):
        a = {
            "num_layers": layers,
            "num_kv_heads": kv,
            "head_dim": dim,
            "seq_len": seq,
            "batch": batch,
            "bytes_per_value": width,
            "block_size": block,
        } | over
        r = sol.call("kv_cache_bytes", *a.values())
        if isinstance(r, bool) or not isinstance(r, int):
            fail(f"kv_cache_bytes returned {type(r).__name__}, not an int")
        return r

    base = size()
    for name, value in (
        ("num_kv_heads", 2 * kv),
        ("batch", 2 * batch),
        ("num_layers", 2 * layers),
        ("head_dim", 2 * dim),
    ):
        if size(**{name: value}) != 2 * base:
            fail(f"doubling {name} did not double the cache")
    if size(num_kv_heads=1) * kv != base:
        fail("the cache is not proportional to num_kv_heads")


# Each argument at its minimum is accepted; one below it (and far below it) is refused.
KV_ARGS = [
    "num_layers",
    "num_kv_heads",
    "head_dim",
    "seq_len",
    "batch",
    "bytes_per_value",
    "block_size",
]
KV_MIN = {
    "num_layers": 1,
    "num_kv_heads": 1,
    "head_dim": 1,
    "seq_len": 0,
    "batch": 0,
    "bytes_per_value": 1,
    "block_size": 1,
}
MB_ARGS = [
    "memory_bytes",
    "weight_bytes",
    "num_layers",
    "num_kv_heads",
    "head_dim",
    "seq_len",
    "bytes_per_value",
    "block_size",
]
MB_MIN = {
    "memory_bytes": 0,
    "weight_bytes": 0,
    "num_layers": 1,
    "num_kv_heads": 1,
    "head_dim": 1,
    "seq_len": 1,
    "bytes_per_value": 1,
    "block_size": 1,
}
CT_ARGS = ["seq_len", "block_size"]
CT_MIN = {"seq_len": 0, "block_size": 1}


def validation(d):
    ok_kv = {
        "num_layers": 32,
        "num_kv_heads": 8,
        "head_dim": 128,
        "seq_len": 8192,
        "batch": 4,
        "bytes_per_value": 2,
        "block_size": 16,
    }
    ok_mb = {
        "memory_bytes": 80 * GIB,
        "weight_bytes": 16 * 10**9,
        "num_layers": 32,
        "num_kv_heads": 8,
        "head_dim": 128,
        "seq_len": 8192,
        "bytes_per_value": 2,
        "block_size": 16,
    }
    below = d.choice([2, 5, 1000])
    return case(
        data={"kv": ok_kv, "mb": ok_mb, "ct": {"seq_len": 100, "block_size": 16}, "below": below}
    )


def refuses_below_minimum(sol, c):
    calls, what = [], []
    for target, names, minimum, key in (
        ("kv_cache_bytes", KV_ARGS, KV_MIN, "kv"),
        ("max_batch", MB_ARGS, MB_MIN, "mb"),
        ("cached_tokens", CT_ARGS, CT_MIN, "ct"),
    ):
        for name, below in [(n, b) for n in names for b in (1, c.data["below"])]:
            args = dict(c.data[key]) | {name: minimum[name] - below}
            calls.append(
                {"op": "call", "target": target, "args": [args[n] for n in names], "kwargs": {}}
            )
            what.append(f"{target} with {name}={minimum[name] - below}")
    for label, (ok, answer) in zip(what, sol.batch(calls), strict=True):
        if ok or not str(answer).startswith("ValueError"):
            fail(f"{label} should raise ValueError, got {answer if ok else str(answer)[:80]}")


def accepts_the_minimum(sol, c):
    out = []
    for target, names, minimum, key in (
        ("kv_cache_bytes", KV_ARGS, KV_MIN, "kv"),
        ("max_batch", MB_ARGS, MB_MIN, "mb"),
        ("cached_tokens", CT_ARGS, CT_MIN, "ct"),
    ):
        for name in names:
            args = dict(c.data[key]) | {name: minimum[name]}
            out.append(sol.call(target, *[args[n] for n in names]))
    return as_exact(out, "a call at the arguments' minimum")


def worked_example(sol, c):
    return as_exact(
        [
            sol.call("kv_cache_bytes", 32, 8, 128, 8192, 1, 2),
            sol.call("kv_cache_bytes", 32, 8, 128, 8001, 1, 2, block_size=16),
            sol.call("max_batch", 80 * GIB, 16_060_000_000, 32, 8, 128, 8192, 2),
            sol.call("max_batch", 80 * GIB, 16_060_000_000, 32, 32, 128, 8192, 2),
            sol.call("max_batch", 10**9, 2 * 10**9, 32, 8, 128, 8192, 2),
        ],
        "the example",
    )


def no_args(d):
    return case()


DECLARATIONS = [
    values(
        "the statement's example",
        worked_example,
        no_args,
        cases=1,
        visible=True,
        expect=lambda c: torch.tensor([GIB, 1050673152, 65, 16, 0], dtype=torch.int64),
        description="1 GiB per 8k-token sequence of a Llama-3-8B-like model, 65 fit in 80 GiB",
    ),
    values(
        "kv_cache_bytes of drawn models",
        bytes_of,
        layout,
        cases=6,
        expect=expected_bytes,
        visible=True,
        description="2 x layers x kv heads x head_dim x bytes x slots x batch",
    ),
    values("kv_cache_bytes matches the reference", bytes_of, layout, cases=4),
    values(
        "cached_tokens rounds up to whole blocks",
        slots_of,
        token_slots,
        cases=4,
        expect=expected_slots,
        visible=True,
        description="lengths on, just below and just above block boundaries",
    ),
    edge(
        "cached_tokens of lengths past 2**53",
        slots_of,
        huge_slots,
        cases=3,
        expect=expected_slots,
        description="rounded up in integers, exact where a float division is not",
    ),
    edge(
        "cached_tokens without paging",
        slots_unpaged,
        token_slots,
        cases=2,
        expect=lambda c: torch.tensor(c.args[0], dtype=torch.int64),
    ),
    values(
        "max_batch on drawn GPUs",
        batch_of,
        serving,
        cases=6,
        expect=expected_batch,
        visible=True,
        description="memory = weights + n sequences + less than one more",
    ),
    edge(
        "free memory exactly a whole number of sequences",
        batch_of,
        exact_fit,
        cases=3,
        expect=expected_batch,
    ),
    edge("free memory exactly one sequence", batch_of, exactly_one, cases=2, expect=expected_batch),
    edge(
        "block_size left out: no paging", unpaged_sizes, unpaged, cases=3, expect=expected_unpaged
    ),
    edge(
        "weights leave no room for one sequence",
        batch_of,
        weights_too_big,
        cases=4,
        expect=expected_batch,
    ),
    edge("byte counts far beyond 2**53", batch_of, beyond_floats, cases=4, expect=expected_batch),
    edge("each argument at its minimum is accepted", accepts_the_minimum, validation, cases=1),
    edge(
        "arguments below their minimum raise ValueError", refuses_below_minimum, validation, cases=3
    ),
    shapes("returns a Python int", bytes_of, layout, cases=1),
    prop("the batch returned fits and one more does not", both_functions_agree, serving, cases=4),
    prop(
        "the cache is linear in KV heads, batch, layers and head_dim",
        gqa_scales_linearly,
        layout,
        cases=4,
    ),
    performance(
        "time against the reference",
        "kv_cache_bytes",
        lambda d: case(32, 8, 128, d.integer(1, 32_768), d.integer(1, 64), 2, 16),
        calls=32,
        description="one size per call: microseconds, mostly the sending of "
        "the arguments; reported with its spread, not graded in this exercise",
    ),
]
