import torch

from sandbox.grading import api_rule, case, edge, fail, nontrivial, performance, prop, shapes
from sandbox.grading import values


def token_batch(d, *, size=None, empty=False, pad=None, batch_first=None):
    """Token ids in [0, 6), so real tokens often equal a pad value of 0."""
    b = size if size is not None else d.size(1, 7)
    lengths = [d.integer(0 if empty else 1, 9) for _ in range(b)]
    if empty:
        lengths[d.integer(0, b - 1)] = 0
    batch = [(d.integers((n,), 0, 6), d.integer(0, 4)) for n in lengths]
    return case(batch, pad_value=pad if pad is not None else d.choice([0, -1, 3]),
                batch_first=batch_first if batch_first is not None else d.choice([True, False]))


def feature_batch(d, *, batch_first=None):
    b, f = d.size(1, 6), d.size(1, 5)
    batch = [(d.tensor((d.integer(1, 8), f)), d.integer(0, 9)) for _ in range(b)]
    return case(batch, pad_value=d.choice([0.0, -100.0]),
                batch_first=batch_first if batch_first is not None else d.choice([True, False]))


def default_batch(d):
    """Token ids of different lengths (one of 9, one of at most 5), passed with no keyword."""
    b = d.size(2, 6)
    lengths = [d.integer(1, 9) for _ in range(b)]
    lengths[0], lengths[-1] = 9, d.integer(1, 5)
    return case([(d.integers((n,), 0, 6), d.integer(0, 4)) for n in lengths])


def trusted(c):
    """The batch built one position at a time, in the grader."""
    batch, pad, first = c.args[0], c.kwargs["pad_value"], c.kwargs["batch_first"]
    longest = max(len(s) for s, _ in batch)
    tail = tuple(batch[0][0].shape[1:])
    inputs = torch.empty((len(batch), longest, *tail), dtype=batch[0][0].dtype)
    mask = torch.zeros((len(batch), longest), dtype=torch.bool)
    for i, (s, _) in enumerate(batch):
        for t in range(longest):
            inputs[i, t] = s[t] if t < len(s) else pad
            mask[i, t] = t < len(s)
    if not first:
        inputs, mask = inputs.transpose(0, 1), mask.transpose(0, 1)
    return {"inputs": inputs, "lengths": torch.tensor([len(s) for s, _ in batch]),
            "mask": mask, "labels": torch.tensor([y for _, y in batch])}


def trusted_defaults(c):
    return trusted(case(c.args[0], pad_value=0, batch_first=True))


def mask_agrees_with_lengths(sol, c):
    out = sol.call("collate", *c.args, **c.kwargs)
    mask = out["mask"] if c.kwargs["batch_first"] else out["mask"].transpose(0, 1)
    if mask.dtype != torch.bool:
        fail(f"the mask's dtype is {mask.dtype}, expected torch.bool")
    counted = mask.sum(dim=1)
    if not torch.equal(counted, out["lengths"]):
        fail(f"the mask counts {counted.tolist()} real elements, lengths say "
             f"{out['lengths'].tolist()}")
    if mask.shape[1] and not bool(mask[:, 0].eq(out["lengths"] > 0).all()):
        fail("a sequence's real elements are not at its start")


def round_trip(sol, c):
    """Cutting each row at its length gives back the sequences, in order."""
    out = sol.call("collate", *c.args, **c.kwargs)
    inputs = out["inputs"] if c.kwargs["batch_first"] else out["inputs"].transpose(0, 1)
    for i, (seq, label) in enumerate(c.args[0]):
        if not torch.equal(inputs[i, : len(seq)], seq):
            fail(f"row {i} does not start with sequence {i}")
        if int(out["labels"][i]) != label:
            fail(f"label {i} is {int(out['labels'][i])}, expected {label}")


def timing_case(d):
    """Sixteen feature sequences of 8 to 32 steps, for the performance test."""
    batch = [(d.tensor((d.integer(8, 32), 8)), d.integer(0, 9)) for _ in range(16)]
    return case(batch, 0.0, True)


DECLARATIONS = [
    values("token ids, padded and masked", "collate", token_batch, expect=trusted, visible=True,
           cases=3, description="1-D sequences of token ids; pad value and layout drawn"),
    values("feature sequences match the reference", "collate", feature_batch, cases=3,
           dtypes=("float32", "float64")),
    values("feature sequences, sequence first", "collate",
           lambda d: feature_batch(d, batch_first=False), expect=trusted, cases=2),
    values("pad value and layout left to their defaults", "collate", default_batch,
           expect=trusted_defaults, cases=2, description="collate(batch) alone"),
    edge("tokens equal to the pad value", "collate", lambda d: token_batch(d, pad=0),
         expect=trusted, cases=3, description="real tokens of id 0 with pad_value 0"),
    edge("an empty sequence in the batch", "collate",
         lambda d: token_batch(d, size=d.size(2, 6), empty=True), expect=trusted, cases=2),
    edge("a batch of one", "collate", lambda d: token_batch(d, size=1), expect=trusted,
         cases=2),
    shapes("shapes and dtypes", "collate", feature_batch, dtypes=("float32", "float64"),
           cases=2),
    prop("the mask agrees with the lengths", mask_agrees_with_lengths, token_batch, cases=3),
    prop("rows give back the sequences and their labels", round_trip, feature_batch, cases=3),
    nontrivial("the batch is not empty", "collate", feature_batch),
    performance("time against the reference", "collate", timing_case, calls=4,
                description="reported with its spread; not graded in this exercise"),
    api_rule("pads by hand", visible=True, description="no torch.nn.utils.rnn helpers"),
]
