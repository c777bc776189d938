import torch

from sandbox.grading import (
    case,
    edge,
    expect_close,
    fail,
    nontrivial,
    performance,
    prop,
    shapes,
    values,
)

CASTS = (None, "float64", "float16", "bfloat16", "float32")
NAMEDTUPLE = "torch.nn.modules.module.namedtuple"  # collections.namedtuple, reached via torch


def leaf(d, n):
    """A tensor of one of the kinds a batch holds, or a plain value."""
    kind = d.choice(["float", "float64", "half", "labels", "mask", "plain", "int32"])
    if kind == "float":
        return d.tensor((n, d.size(1, 5)))
    if kind == "float64":
        return d.tensor((n,), dtype="float64")
    if kind == "half":
        return d.tensor((n, 2), dtype=d.choice(["float16", "bfloat16"]))
    if kind == "labels":
        return d.integers((n,), 0, 10)
    if kind == "int32":
        return d.integers((n, 2), -5, 5).to(torch.int32)
    if kind == "mask":
        return d.integers((n, 3), 0, 2).bool()
    return d.choice(["sample-7", 3, 0.25, None, True, ""])


def tree(d, n, depth):
    """A randomly nested batch: dicts (string and int keys), lists and tuples."""
    if depth == 0:
        return leaf(d, n)
    width = d.integer(0, 3)
    kind = d.choice(["dict", "list", "tuple"])
    items = [tree(d, n, depth - 1 if d.integer(0, 2) else 0) for _ in range(width)]
    if kind == "dict":
        keys = [f"k{i}" if d.integer(0, 3) else i for i, _ in enumerate(items)]
        order = d.permutation(len(items))
        return {keys[i]: items[i] for i in order}
    return items if kind == "list" else tuple(items)


def typical(d):
    """A batch as a data loader yields it, with a drawn dtype to cast to."""
    n = d.size(1, 6)
    batch = {
        "inputs": d.tensor((n, d.size(1, 7))),
        "labels": d.integers((n,), 0, 5),
        "mask": d.integers((n, d.size(1, 4)), 0, 2).bool(),
        "meta": {"ids": [f"s{i}" for i in range(n)], "epoch": d.integer(0, 9), "note": None},
        "views": [d.tensor((n, 3), dtype="float64"), d.tensor((n, 2), dtype="float16")],
        "lengths": (d.integers((n,), 1, 9), n),
    }
    return case(batch, data={"dtype": d.choice(CASTS)})


def random_tree(d):
    n = d.size(1, 5)
    return case(
        {
            "x": tree(d, n, 3),
            1: tree(d, n, 2),
            "rest": [tree(d, n, 2)],
            "pair": (tree(d, n, 1), "tag"),
        },
        data={"dtype": d.choice(CASTS)},
    )


def as_dtype(sol, name):
    """A torch.dtype in the solution's process (a dtype cannot travel as a value)."""
    probe = torch.zeros(0, dtype=getattr(torch, name))
    return sol.new("torch.Tensor.dtype.__get__", probe)


def run(sol, c):
    name = c.data["dtype"]
    kwargs = {} if name is None else {"dtype": as_dtype(sol, name)}
    return sol.call("to_device", c.args[0], sol.device, **kwargs)


def trusted(c):
    """Written out in the grader: floating tensors cast, everything else as it was."""
    dtype = None if c.data["dtype"] is None else getattr(torch, c.data["dtype"])

    def walk(v):
        if isinstance(v, torch.Tensor):
            return v.to(dtype) if dtype is not None and v.dtype.is_floating_point else v.clone()
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, tuple):
            return tuple(walk(x) for x in v)
        return v

    return walk(c.args[0])


def keys_in_order(sol, c):
    got = run(sol, c)

    def walk(a, b, where):
        if isinstance(b, dict):
            if list(a) != list(b):
                fail(f"{where}: keys {list(a)!r}, expected in the order {list(b)!r}")
            for k in b:
                walk(a[k], b[k], f"{where}[{k!r}]")
        elif isinstance(b, (list, tuple)):
            if type(a) is not type(b):
                fail(f"{where}: a {type(a).__name__}, the batch had a {type(b).__name__}")
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")

    walk(got, c.args[0], "batch")


def namedtuples(d):
    n = d.size(1, 6)
    return case(
        data={
            "x": d.tensor((n, d.size(1, 5)), dtype=d.choice(["float32", "float64"])),
            "y": d.integers((n,), 0, 4),
            "mask": d.integers((n,), 0, 2).bool(),
            "dtype": d.choice(CASTS[1:]),
        }
    )


def namedtuple_kept(sol, c):
    """Namedtuples do not survive the trip to the grader, so the batch is built in the
    solution's process and the answer is inspected there."""
    data = c.data
    sample = sol.new(NAMEDTUPLE, "Sample", ["inputs", "labels", "mask", "tag"])
    inner = sol.method_ref(sample, "_make", [data["x"], data["y"], data["mask"], "train"])
    batch = sol.keep({"sample": inner, "also": [inner]})
    moved = sol.method_ref(
        sol.new("to_device.__get__", batch),
        "__call__",
        sol.device,
        dtype=as_dtype(sol, data["dtype"]),
    )
    for where, ref in (
        ("['sample']", sol.index(moved, "sample")),
        ("['also'][0]", sol.index(sol.index(moved, "also"), 0)),
    ):
        if not sol.method(sample, "__instancecheck__", ref):
            fail(f"batch{where} was a namedtuple Sample and is no longer one")
        fields = sol.method(ref, "_asdict")
        want = getattr(torch, data["dtype"])
        if fields["inputs"].dtype != want:
            fail(f"batch{where}.inputs is {fields['inputs'].dtype}, expected {want}")
        if fields["labels"].dtype != torch.int64 or fields["mask"].dtype != torch.bool:
            fail(f"batch{where}: labels or mask changed dtype")
        if fields["tag"] != "train":
            fail(f"batch{where}.tag changed")
        expect_close(fields["inputs"], data["x"].to(want), f"batch{where}.inputs")
        expect_close(fields["labels"], data["y"], f"batch{where}.labels")
    return None


def dtypes_follow_the_rule(sol, c):
    got = run(sol, c)
    cast = c.data["dtype"]

    def walk(a, b, where):
        if isinstance(b, torch.Tensor):
            if not isinstance(a, torch.Tensor):
                fail(f"{where}: a tensor became a {type(a).__name__}")
            want = getattr(torch, cast) if cast and b.dtype.is_floating_point else b.dtype
            if a.dtype != want:
                fail(f"{where}: dtype {a.dtype}, expected {want} (input {b.dtype})")
            if a.device.type != sol.device:
                fail(f"{where}: on {a.device}, expected {sol.device}")
        elif isinstance(b, dict):
            for k in b:
                walk(a[k], b[k], f"{where}[{k!r}]")
        elif isinstance(b, (list, tuple)):
            for i, (x, y) in enumerate(zip(a, b, strict=True)):
                walk(x, y, f"{where}[{i}]")

    walk(got, c.args[0], "batch")


def bare_tensor(d):
    return case(
        d.tensor(d.shape((1, 3)), dtype=d.choice(["float32", "float64"])),
        data={"dtype": d.choice(CASTS)},
    )


def plain_values(d):
    return case(
        {
            "name": "a",
            "n": 3,
            "p": 0.5,
            "none": None,
            "flags": [True, False],
            "empty": [],
            "nothing": (),
            "inner": {},
        },
        data={"dtype": d.choice(CASTS)},
    )


def timing_case(d):
    """A dict of 8 small tensors, two lists and a tuple, for the performance test."""
    g = torch.Generator().manual_seed(0)
    batch = {f"x{i}": torch.randn(16, 8, generator=g) for i in range(8)}
    batch["labels"] = [torch.randint(0, 9, (16,), generator=g) for _ in range(4)]
    batch["pair"] = (torch.randn(4, generator=g), "tag")
    return case(batch, "cpu")


DECLARATIONS = [
    values(
        "a loader's batch, cast to a drawn dtype",
        run,
        typical,
        expect=trusted,
        visible=True,
        cases=3,
        description="inputs, labels, masks, metadata; only floating tensors are cast",
    ),
    values("randomly nested batches", run, random_tree, expect=trusted, cases=4),
    values("match the reference", run, random_tree, cases=3),
    shapes("dtypes and device of every tensor", run, typical, cases=2),
    prop(
        "integer and bool tensors keep their dtype",
        dtypes_follow_the_rule,
        random_tree,
        cases=4,
        description="only floating-point tensors take the requested dtype",
    ),
    prop("containers keep their types and key order", keys_in_order, random_tree, cases=3),
    prop("namedtuples stay namedtuples", namedtuple_kept, namedtuples, cases=2),
    edge("a bare tensor", run, bare_tensor, expect=trusted, cases=2),
    edge("plain values and empty containers", run, plain_values, expect=trusted, cases=2),
    nontrivial("the tensors are not zeroed", run, typical),
    performance(
        "time against the reference",
        "to_device",
        timing_case,
        calls=4,
        description="reported with its spread; not graded in this exercise",
    ),
]
