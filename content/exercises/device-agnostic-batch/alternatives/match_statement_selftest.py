# Style: structural pattern matching in a small mover class; __main__ self-test.
from collections import namedtuple

import torch


class Mover:
    def __init__(self, device, dtype, non_blocking):
        self.device, self.dtype, self.non_blocking = torch.device(device), dtype, non_blocking

    def __call__(self, value):
        match value:
            case torch.Tensor() if self.dtype is not None and torch.is_floating_point(value):
                return value.to(self.device, self.dtype, non_blocking=self.non_blocking)
            case torch.Tensor():
                return value.to(self.device, non_blocking=self.non_blocking)
            case dict():
                return dict(zip(value.keys(), map(self, value.values()), strict=True))
            case tuple() if hasattr(value, "_fields"):
                return type(value)(*map(self, value))
            case tuple():
                return tuple(map(self, value))
            case list():
                return list(map(self, value))
            case _:
                return value


def to_device(batch, device, dtype=None, non_blocking=False):
    return Mover(device, dtype, non_blocking)(batch)


if __name__ == "__main__":
    Pair = namedtuple("Pair", "x y")
    out = to_device({"p": Pair(torch.ones(2), torch.arange(2)), "id": "a"}, "cpu", torch.float16)
    print(type(out["p"]).__name__, out["p"].x.dtype, out["p"].y.dtype, out["id"])
