"""The result of one comparison, printed for people (a table) and for machines (one JSON line)."""

from __future__ import annotations

import json
import math
import textwrap
from dataclasses import dataclass
from typing import Any, Final

from .correctness import format_tolerance
from .receipt import Receipt
from .stats import SideStats
from .verdict import Verdict, format_ms, format_percent

RESULT_PREFIX: Final = "BACKPROP_LAB_RESULT"
_PAD: Final = " " * 13


def _finite(value: Any) -> Any:
    """JSON has no infinity or NaN: those become null, recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


@dataclass(frozen=True)
class LabResult:
    label: str
    mode: str
    eager: SideStats
    compiled: SideStats
    compile_seconds: float  # the first compiled call, wall clock, synchronized
    speedup: float  # eager median / compiled median
    verdict: Verdict
    verdict_text: str
    correct: bool
    max_abs_diff: float
    tolerance: float
    mismatch: str | None
    receipt: Receipt

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "mode": self.mode,
            "eager": self.eager.to_dict(),
            "compiled": self.compiled.to_dict(),
            "compile_seconds": self.compile_seconds,
            "speedup": self.speedup,
            "verdict": self.verdict,
            "verdict_text": self.verdict_text,
            "correct": self.correct,
            "max_abs_diff": self.max_abs_diff,
            "tolerance": self.tolerance,
            "mismatch": self.mismatch,
            "receipt": self.receipt.to_dict(),
        }

    def to_json(self) -> str:
        """Strict JSON (no NaN or Infinity: a non-finite number is null)."""
        return json.dumps(_finite(self.to_dict()), allow_nan=False, ensure_ascii=False)

    def result_line(self) -> str:
        return f"{RESULT_PREFIX} {self.to_json()}"

    def table(self) -> str:
        return format_table(self)

    def __str__(self) -> str:
        return self.verdict_text


def _rounds(side: SideStats) -> str:
    return ", ".join(format_ms(ms) for ms in side.rounds_ms)


def _inputs(described: list[Any]) -> str:
    parts = []
    for item in described:
        if isinstance(item, dict) and "shape" in item:
            parts.append(f"{item['dtype']}{item['shape']}")
        elif isinstance(item, dict) and "type" in item:
            parts.append(str(item.get("value", item["type"])))
        else:
            parts.append(json.dumps(item))
    return ", ".join(parts) or "(none)"


def _load(load: float | None, cpus: int) -> str:
    if load is None:
        return f"unknown, {cpus} CPUs"
    busy = " (busy machine: expect noisy timings)" if cpus and load > cpus else ""
    return f"{load:g} (1-minute average) on {cpus} CPUs{busy}"


def _outputs(result: LabResult) -> str:
    if math.isinf(result.tolerance):
        return f"not compared (tolerance=inf); max abs diff {result.max_abs_diff:.3g}"
    if not result.correct:
        return f"DIFFER ({result.mismatch})"
    tolerance = format_tolerance(result.tolerance)
    return (
        f"match (max abs diff {result.max_abs_diff:.3g}; "
        f"tolerance {tolerance} absolute + {tolerance} x |eager| relative)"
    )


def format_table(result: LabResult) -> str:
    r = result.receipt
    title = f"Backprop lab: {result.label}" if result.label else "Backprop lab"
    what = "forward + backward" if r.backward else "forward"
    outputs = _outputs(result)
    rows = [
        f"{title} — torch.compile mode={result.mode!r}, {what}",
        f"  {'':<10}{'median':>12}{'spread':>9}   rounds",
        f"  {'eager':<10}{format_ms(result.eager.median_ms):>12}"
        f"{format_percent(result.eager.spread):>9}   {_rounds(result.eager)}",
        f"  {'compiled':<10}{format_ms(result.compiled.median_ms):>12}"
        f"{format_percent(result.compiled.spread):>9}   {_rounds(result.compiled)}",
        f"  speedup    {result.speedup:.2f}x (eager median / compiled median)",
        f"  compile    {result.compile_seconds:.2f} s, first call (compile cache: "
        f"{r.compile_cache})",
        f"  outputs    {outputs}",
        f"  verdict    {result.verdict}",
        *textwrap.wrap(result.verdict_text, 96, initial_indent=_PAD, subsequent_indent=_PAD),
        "  receipt",
        f"    device         {r.device}",
        f"    torch          {r.torch} (CUDA {r.cuda or 'none'}), Python {r.python}",
        f"    threads        {r.threads} (both sides)",
        f"    inputs         {_inputs(r.inputs)}",
        f"    mode           {r.mode} (compiled by {r.compiled_by})",
        f"    compile cache  {r.compile_cache}: {r.compile_cache_detail}",
        f"    timing         {r.timing_method}",
        f"    rounds         {r.rounds} interleaved (eager, compiled, eager, ...)",
        f"    grad mode      {'enabled' if r.grad_enabled else 'disabled'}",
        f"    date           {r.date} (UTC)",
        f"    platform       {r.platform}",
        f"    machine load   {_load(r.load_average, r.cpus)}",
    ]
    if r.graphs_compiled_while_timing:
        rows.append(
            f"    warning        {r.graphs_compiled_while_timing} graph(s) were compiled after "
            "the first call (recompilation): the timings may include compiling"
        )
    return "\n".join(rows)
