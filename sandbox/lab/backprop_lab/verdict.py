"""The verdict, decided from the two sides' round times alone (pure Python, no torch).

Rules, checked in this order (see README.md):

1. fewer than MIN_ROUNDS rounds on either side -> "inconclusive" (no spread to judge by);
2. either side's spread (IQR / median) above MAX_SPREAD -> "inconclusive" (too noisy);
3. speedup = eager median / compiled median >= SPEEDUP_THRESHOLD and every compiled round
   faster than every eager round (min..max ranges do not overlap) -> "faster";
4. speedup <= 1 / SPEEDUP_THRESHOLD and every compiled round slower than every eager round
   -> "slower";
5. otherwise -> "no significant difference".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

from .stats import SideStats, summarize

Verdict = Literal["faster", "slower", "no significant difference", "inconclusive"]
VERDICTS: Final[tuple[Verdict, ...]] = (
    "faster",
    "slower",
    "no significant difference",
    "inconclusive",
)

SPEEDUP_THRESHOLD: Final = 1.10
MAX_SPREAD: Final = 0.25
MIN_ROUNDS: Final = 3
_EPSILON: Final = 1e-9  # so that exactly 1.10x counts as 1.10x despite float rounding


def format_ms(ms: float) -> str:
    """A duration given in milliseconds, in the unit a person would use."""
    if ms >= 1000.0:
        return f"{_three_digits(ms / 1000.0)} s"
    if ms >= 1.0:
        return f"{_three_digits(ms)} ms"
    return f"{_three_digits(ms * 1000.0)} µs"


def _three_digits(value: float) -> str:
    if value >= 100.0:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 10.0 else f"{value:.2f}"


def format_percent(fraction: float) -> str:
    return f"{fraction * 100.0:.0f}%" if fraction < 10.0 else "over 1000%"


def format_ratio(speedup: float) -> str:
    """'1.62x faster', '1.35x slower' or '1.02x faster': always the larger-over-smaller ratio,
    with a third decimal where two would round up to the threshold (1.099x, not 1.10x)."""
    if speedup <= 0.0:
        return "infinitely slower"
    ratio, word = (speedup, "faster") if speedup >= 1.0 else (1.0 / speedup, "slower")
    digits = 3 if ratio < SPEEDUP_THRESHOLD <= round(ratio, 2) else 2
    return f"{ratio:.{digits}f}x {word}"


def _numbers(eager: SideStats, compiled: SideStats) -> str:
    rounds = len(eager.rounds_ms)
    plural = "round" if rounds == 1 else "rounds"
    return (
        f"eager {format_ms(eager.median_ms)}, spread {format_percent(eager.spread)}; "
        f"compiled {format_ms(compiled.median_ms)}, spread {format_percent(compiled.spread)}; "
        f"{rounds} interleaved {plural}"
    )


def speedup_of(eager: SideStats, compiled: SideStats) -> float:
    """Eager median / compiled median: above 1 means the compiled version is faster."""
    if compiled.median_ms <= 0.0:
        return float("inf")
    return eager.median_ms / compiled.median_ms


def decide(eager: SideStats, compiled: SideStats) -> tuple[Verdict, str]:
    """The verdict and its sentence (without a final period), from two summarized sides."""
    speedup = speedup_of(eager, compiled)
    looked = f"compiled looked {format_ratio(speedup)} ({_numbers(eager, compiled)})"
    fewest = min(len(eager.rounds_ms), len(compiled.rounds_ms))
    if fewest < MIN_ROUNDS:
        rounds = f"{fewest} round{'s' if fewest != 1 else ''}"
        return "inconclusive", (
            f"Inconclusive: {looked}, but {rounds} cannot show how much the timings vary; "
            f"use at least {MIN_ROUNDS}"
        )
    noisy = [
        f"{name} varied by {format_percent(side.spread)}"
        for name, side in (("eager", eager), ("compiled", compiled))
        if side.spread > MAX_SPREAD
    ]
    if noisy:
        return "inconclusive", (
            f"Inconclusive: {looked}, but the timings were too noisy to trust "
            f"({' and '.join(noisy)} between rounds, over the {format_percent(MAX_SPREAD)} limit)"
        )
    if speedup >= SPEEDUP_THRESHOLD - _EPSILON and compiled.max_ms < eager.min_ms:
        return "faster", f"Compiled ran {format_ratio(speedup)} ({_numbers(eager, compiled)})"
    if speedup <= 1.0 / SPEEDUP_THRESHOLD + _EPSILON and compiled.min_ms > eager.max_ms:
        return "slower", f"Compiled ran {format_ratio(speedup)} ({_numbers(eager, compiled)})"
    if 1.0 / SPEEDUP_THRESHOLD + _EPSILON < speedup < SPEEDUP_THRESHOLD - _EPSILON:
        why = f"less than the {SPEEDUP_THRESHOLD:.2f}x needed to call a difference"
    else:
        why = f"but the rounds overlap (eager ranged {_range(eager)}, compiled {_range(compiled)})"
    return "no significant difference", f"No significant difference: {looked}, {why}"


def _range(side: SideStats) -> str:
    return f"{format_ms(side.min_ms)} to {format_ms(side.max_ms)}"


def judge(eager_ms: Sequence[float], compiled_ms: Sequence[float]) -> tuple[Verdict, str]:
    """The verdict and a one-sentence explanation, from each side's per-round times in ms."""
    verdict, text = decide(summarize(eager_ms), summarize(compiled_ms))
    return verdict, text + "."
