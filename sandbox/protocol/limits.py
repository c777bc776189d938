"""What one run may use. Each limit declares, beside its default, the range a request may
move it in: the floor keeps a run able to start (torch needs room to import), the ceiling is
the most this server gives any run."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any


def _limit(default: float, *, floor: float, ceiling: float) -> Any:
    """A limit field that declares the range a request may move it in."""
    return field(default=default, metadata={"floor": floor, "ceiling": ceiling})


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Requests may lower them; `clamped` holds each between its floor and
    the server's ceiling, declared beside it."""

    wall_seconds: float = _limit(60.0, floor=1.0, ceiling=180.0)
    # Wall-clock time a run may spend compiling (as the lab harness reports it, phases.py)
    # before that time counts against wall_seconds.
    compile_seconds: float = _limit(120.0, floor=0.0, ceiling=300.0)
    # CPU time over all threads (torch.compile uses several).
    cpu_seconds: float = _limit(120.0, floor=1.0, ceiling=360.0)
    memory_mb: int = _limit(3072, floor=256, ceiling=6144)  # no swap: memory+swap is the same
    pids: int = _limit(256, floor=16, ceiling=512)  # processes and threads together
    output_bytes: int = _limit(256 * 1024, floor=1024, ceiling=1024 * 1024)
    tmp_mb: int = _limit(512, floor=16, ceiling=1024)  # the private /tmp
    threads: int = _limit(2, floor=1, ceiling=4)  # torch intra-op threads
    # Of the device, cuda backend only.
    gpu_memory_fraction: float = _limit(0.5, floor=0.05, ceiling=0.9)

    def clamped(self) -> Limits:
        """These limits, each held between its floor and its ceiling."""
        values: dict[str, Any] = {}
        for f in fields(self):
            value = min(max(getattr(self, f.name), f.metadata["floor"]), f.metadata["ceiling"])
            # An int limit stays an int (a request may send 300.5 MB).
            values[f.name] = float(value) if isinstance(f.default, float) else int(value)
        return Limits(**values)

    @classmethod
    def from_json(cls, data: object) -> Limits:
        """Limits from a request, clamped; ValueError for anything but finite numbers.
        Unknown names are ignored, so a newer client's extra limit does no harm."""
        if data is None:
            return cls().clamped()
        if not isinstance(data, dict):
            raise ValueError("limits must be an object")
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        for name, value in given.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"limit {name} must be a number")
            # Only floats can be infinite or NaN; math.isfinite would overflow on a huge int.
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"limit {name} must be finite")
        return cls(**given).clamped()


CEILINGS = Limits(**{f.name: f.metadata["ceiling"] for f in fields(Limits)})
FLOORS = Limits(**{f.name: f.metadata["floor"] for f in fields(Limits)})
