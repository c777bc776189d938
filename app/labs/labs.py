"""Timing labs: what a lab run measured, kept and shown per device.

A lab's code calls the sandbox's harness (`backprop_lab.compare`), which prints one line
`BACKPROP_LAB_RESULT {json}` per comparison. Results are kept only from a run of the lab's
own code, unedited (its SHA-256 is the sample's), so an edited run can print anything it
likes without it ever standing as a measurement."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection
from sqlalchemy import select as core_select
from sqlmodel import Session, col, select

from app.models import CodeSample, LabMeasurement, Run

MARKER = "BACKPROP_LAB_RESULT "
VERDICTS = ("faster", "slower", "no significant difference", "inconclusive")
RECENT_PER_DEVICE = 6


def parse_results(stdout: str) -> list[dict[str, Any]]:
    """The harness's result lines in a run's output; anything malformed is skipped."""
    found = []
    for line in stdout.splitlines():
        if not line.startswith(MARKER):
            continue
        try:
            data = json.loads(line[len(MARKER) :])
        except ValueError:
            continue
        if _valid(data):
            found.append(data)
    return found


def _valid(data: object) -> bool:
    if not isinstance(data, dict) or data.get("verdict") not in VERDICTS:
        return False
    numbers = [data.get("speedup"), _median(data, "eager"), _median(data, "compiled")]
    receipt = data.get("receipt")
    return (
        all(isinstance(n, int | float) and math.isfinite(n) for n in numbers)
        and isinstance(receipt, dict)
        and isinstance(receipt.get("device"), str)
    )


def _median(data: dict[str, Any], side: str) -> object:
    part = data.get(side)
    return part.get("median_ms") if isinstance(part, dict) else None


def record(session: Session, run: Run) -> int:
    """Keep the measurements of a finished run of a lab's own code; how many."""
    if run.item_id is None or run.sample_index is None or run.verdict != "ok":
        return 0
    sample = session.exec(
        select(CodeSample).where(
            CodeSample.item_id == run.item_id, CodeSample.index == run.sample_index
        )
    ).first()
    if sample is None or hashlib.sha256(sample.code.encode()).hexdigest() != run.code_sha256:
        return 0
    results = parse_results(run.stdout)
    for data in results:
        session.add(
            LabMeasurement(
                run_id=run.id,
                item_id=run.item_id,
                label=str(data.get("label") or "")[:200],
                device=str(data["receipt"]["device"])[:200],
                backend=run.backend or "",
                verdict=data["verdict"],
                speedup=float(data["speedup"]),
                eager_ms=float(data["eager"]["median_ms"]),
                compiled_ms=float(data["compiled"]["median_ms"]),
                result=json.dumps(data),
            )
        )
    return len(results)


@dataclass(frozen=True)
class Measured:
    """One kept comparison, as a lab page shows it."""

    label: str
    device: str
    verdict: str
    speedup: float
    eager_ms: float
    compiled_ms: float
    result: dict[str, Any]
    measured_at: Any

    def spread(self, side: str) -> float | None:
        part = self.result.get(side, {})
        value = part.get("spread") if isinstance(part, dict) else None
        return float(value) if isinstance(value, int | float) else None

    def quartiles(self, side: str) -> tuple[float, float] | None:
        """The interquartile range of the rounds, for the chart's whisker."""
        part = self.result.get(side, {})
        rounds = sorted(part.get("rounds_ms") or []) if isinstance(part, dict) else []
        if len(rounds) < 2:
            return None
        return _quantile(rounds, 0.25), _quantile(rounds, 0.75)


def _quantile(ordered: list[float], q: float) -> float:
    position = q * (len(ordered) - 1)
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def measured(connection: Connection, item_id: int) -> dict[str, list[Measured]]:
    """The recent measurements of a lab, by device, newest first."""
    rows = connection.execute(
        core_select(
            col(LabMeasurement.label),
            col(LabMeasurement.device),
            col(LabMeasurement.verdict),
            col(LabMeasurement.speedup),
            col(LabMeasurement.eager_ms),
            col(LabMeasurement.compiled_ms),
            col(LabMeasurement.result),
            col(LabMeasurement.measured_at),
        )
        .where(col(LabMeasurement.item_id) == item_id)
        .order_by(col(LabMeasurement.measured_at).desc(), col(LabMeasurement.id).desc())
        .limit(200)
    )
    by_device: dict[str, list[Measured]] = {}
    for label, device, verdict, speedup, eager, compiled, result, at in rows:
        kept = by_device.setdefault(device, [])
        if len(kept) < RECENT_PER_DEVICE:
            kept.append(
                Measured(label, device, verdict, speedup, eager, compiled, json.loads(result), at)
            )
    return by_device


@dataclass(frozen=True)
class LabLink:
    slug: str
    title: str
    latest: list[Measured]


def latest(connection: Connection, item_id: int) -> list[Measured]:
    """A lab's two most recent measurements on each device."""
    return [m for kept in measured(connection, item_id).values() for m in kept[:2]]
