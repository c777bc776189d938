"""Seeded draws of sizes, shapes and tensors for one case of one test.

Every case gets its own `Draw`, seeded from the submission's seed, the test's name and the
case's number, so a case is the same whichever tests run before it, and another seed gives
other inputs. Sizes lean to the edges where bugs live: the smallest allowed (1, or 0 where
the test allows empty), odd and non-power-of-two sizes, then anything in range."""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Sequence
from typing import Any

import torch

# Odd sizes that are not powers of two: off-by-one and "assumed a multiple of 8" bugs.
AWKWARD_SIZES = (3, 5, 7, 13, 17, 31, 37, 63)
DTYPES = {
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float64": torch.float64,
}


def case_seed(seed: int, test: str, case: int) -> int:
    """A 63-bit seed for one case, independent of every other test's draws."""
    digest = hashlib.sha256(f"{seed}:{test}:{case}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


class Draw:
    """The random choices of one case. `case` is its number (0, 1, ...): the first cases
    take the edge sizes, so a test with 3 cases always meets size 1 and an odd size."""

    def __init__(self, seed: int, case: int = 0, dtype: str = "float32") -> None:
        self.case = case
        self.seed = seed
        self.dtype_name = dtype
        # Each draw of the torch generator, in order: (kind, its arguments, the tensor made),
        # so that a failing case's snippet can draw its large inputs again from the seed.
        self.log: list[tuple[str, dict[str, Any], torch.Tensor]] = []
        self.random = random.Random(seed)
        self.generator = torch.Generator().manual_seed(seed)

    @property
    def dtype(self) -> torch.dtype:
        """The dtype this case runs in (a test's `dtypes` runs each case once per dtype)."""
        return DTYPES[self.dtype_name]

    def size(self, low: int = 1, high: int = 16) -> int:
        """One size in [low, high]: case 0 takes `low`, case 1 an odd non-power-of-two size
        in range (when there is one), later cases lean to those and otherwise draw evenly."""
        if low > high:
            raise ValueError(f"size range is empty: {low}..{high}")
        awkward = [s for s in AWKWARD_SIZES if low <= s <= high]
        if self.case == 0:
            return low
        if self.case == 1 and awkward:
            return self.random.choice(awkward)
        roll = self.random.random()
        if roll < 0.15:
            return low
        if roll < 0.45 and awkward:
            return self.random.choice(awkward)
        return self.random.randint(low, high)

    def shape(
        self, dims: int | tuple[int, int] = 2, low: int = 1, high: int = 16
    ) -> tuple[int, ...]:
        """A shape of `dims` sizes (or a number of dims drawn from the (min, max) pair), each
        drawn with `size`: only the last is pushed to the edge in case 0, so case 0 is not
        always a 1x1 tensor."""
        count = dims if isinstance(dims, int) else self.random.randint(*dims)
        sizes = []
        for i in range(count):
            if self.case == 0 and i < count - 1:
                sizes.append(self.random.randint(max(low, 2) if high >= 2 else low, high))
            else:
                sizes.append(self.size(low, high))
        return tuple(sizes)

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    def number(self, low: float = 0.0, high: float = 1.0) -> float:
        return self.random.uniform(low, high)

    def choice(self, options: Sequence[Any]) -> Any:
        return options[self.random.randrange(len(options))]

    def permutation(self, n: int) -> list[int]:
        order = list(range(n))
        self.random.shuffle(order)
        return order

    def tensor(
        self,
        shape: Sequence[int],
        *,
        low: float = -3.0,
        high: float = 3.0,
        dtype: torch.dtype | str | None = None,
        normal: bool = False,
    ) -> torch.Tensor:
        """Random floats: uniform in [low, high), or standard normal with `normal`, in this
        case's dtype unless given. Drawn in float64 and then cast, so that float32 and
        float64 cases of one seed hold the same values up to rounding."""
        chosen = DTYPES[dtype] if isinstance(dtype, str) else (dtype or self.dtype)
        if normal:
            values = torch.randn(tuple(shape), generator=self.generator, dtype=torch.float64)
        else:
            values = torch.rand(tuple(shape), generator=self.generator, dtype=torch.float64)
            values = values * (high - low) + low
        made = values.to(chosen)
        args = {"shape": list(shape), "low": low, "high": high, "normal": normal}
        self.log.append(("tensor", {**args, "dtype": str(chosen).removeprefix("torch.")}, made))
        return made

    def integers(self, shape: Sequence[int], low: int, high: int) -> torch.Tensor:
        """Random int64 in [low, high)."""
        made = torch.randint(low, high, tuple(shape), generator=self.generator)
        self.log.append(("integers", {"shape": list(shape), "low": low, "high": high}, made))
        return made

    def weights(self, fan_in: int, fan_out: int) -> torch.Tensor:
        """A (fan_out, fan_in) weight at the scale nn.Linear starts from."""
        bound = 1.0 / math.sqrt(max(fan_in, 1))
        return self.tensor((fan_out, fan_in), low=-bound, high=bound)
