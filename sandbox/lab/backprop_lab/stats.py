"""Summaries of one side's round times: median, interquartile range and spread.

Pure Python (no torch), so the verdict can be unit-tested on synthetic numbers. Quartiles are
linearly interpolated between the sorted round times (NumPy's default, "inclusive" method):
with 5 rounds, Q1 is the 2nd fastest round and Q3 the 4th.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) of `values`, linearly interpolated between sorted values."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"percentile must be within 0..100, not {q}")
    ordered = sorted(float(v) for v in values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    fraction = position - low
    return ordered[low] + (ordered[high] - ordered[low]) * fraction


def median(values: Sequence[float]) -> float:
    return percentile(values, 50.0)


def iqr(values: Sequence[float]) -> float:
    """Interquartile range: Q3 - Q1 (0 for a single value)."""
    return percentile(values, 75.0) - percentile(values, 25.0)


def spread(values: Sequence[float]) -> float:
    """IQR / median: 0.03 means the middle half of the rounds lie within 3% of the median."""
    middle = median(values)
    if middle <= 0.0:
        return math.inf
    return iqr(values) / middle


@dataclass(frozen=True)
class SideStats:
    """One side (eager or compiled): per-call time of each round, in milliseconds."""

    median_ms: float
    iqr_ms: float
    spread: float
    rounds_ms: list[float] = field(default_factory=list)

    @property
    def min_ms(self) -> float:
        return min(self.rounds_ms)

    @property
    def max_ms(self) -> float:
        return max(self.rounds_ms)

    def to_dict(self) -> dict[str, object]:
        return {
            "median_ms": self.median_ms,
            "iqr_ms": self.iqr_ms,
            "spread": self.spread,
            "rounds_ms": list(self.rounds_ms),
        }


def summarize(rounds_ms: Sequence[float]) -> SideStats:
    """Median, IQR and spread of the round times (ms per call, one number per round)."""
    if not rounds_ms:
        raise ValueError("no rounds to summarize")
    values = [float(v) for v in rounds_ms]
    if any(not math.isfinite(v) or v < 0.0 for v in values):
        raise ValueError(f"round times must be finite and non-negative: {values}")
    return SideStats(
        median_ms=median(values), iqr_ms=iqr(values), spread=spread(values), rounds_ms=values
    )
