"""The sandbox contract: what a run asks for, what it streams, and the verdict it ends with.

Messages travel as JSON lines over the worker's Unix socket. This module has no dependency
beyond the standard library so that the worker, the app and tests share it unchanged."""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

MAX_CODE_BYTES = 64 * 1024


class Verdict(StrEnum):
    """How a run ended. A closed set: only INTERNAL_ERROR means the sandbox failed."""

    OK = "ok"  # the code ran to the end and exited 0
    ERROR = "error"  # the code raised or exited non-zero
    TIMEOUT = "timeout"  # wall-clock or CPU time ran out
    MEMORY_LIMIT = "memory_limit"  # the run's memory cgroup hit its limit
    OUTPUT_LIMIT = "output_limit"  # stdout + stderr passed the output ceiling
    KILLED = "killed"  # a forbidden operation (seccomp) or a cancel
    REJECTED = "rejected"  # a bad request: too large, not UTF-8, unknown backend
    INTERNAL_ERROR = "internal_error"  # the sandbox itself failed


class Backend(StrEnum):
    CPU = "cpu"
    CUDA = "cuda"
    AUTO = "auto"  # cuda when the host has it, else cpu


@dataclass(frozen=True)
class Limits:
    """Per-run limits. Requests may lower them; `clamped` caps every value at its ceiling."""

    wall_seconds: float = 60.0
    cpu_seconds: float = 120.0  # CPU time over all threads (torch.compile uses several)
    memory_mb: int = 3072  # no swap: the cgroup's memory+swap limit is the same number
    pids: int = 256  # processes and threads together
    output_bytes: int = 256 * 1024
    tmp_mb: int = 512  # the private /tmp
    threads: int = 2  # torch intra-op threads
    gpu_memory_fraction: float = 0.5  # of the device, cuda backend only

    def clamped(self) -> Limits:
        """These limits, each held between a floor and the server's ceiling."""
        values = {}
        for f in fields(self):
            low, high = _BOUNDS[f.name]
            values[f.name] = type(getattr(CEILINGS, f.name))(
                min(max(getattr(self, f.name), low), high)
            )
        return Limits(**values)

    @classmethod
    def from_json(cls, data: object) -> Limits:
        """Limits from a request; ValueError for anything but finite numbers."""
        if data is None:
            return cls().clamped()
        if not isinstance(data, dict):
            raise ValueError("limits must be an object")
        known = {f.name for f in fields(cls)}
        given = {k: v for k, v in data.items() if k in known}
        for name, value in given.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"limit {name} must be a number")
            if not math.isfinite(value):
                raise ValueError(f"limit {name} must be finite")
        return cls(**given).clamped()


CEILINGS = Limits(
    wall_seconds=180.0,
    cpu_seconds=360.0,
    memory_mb=6144,
    pids=512,
    output_bytes=1024 * 1024,
    tmp_mb=1024,
    threads=4,
    gpu_memory_fraction=0.9,
)
_BOUNDS: dict[str, tuple[float, float]] = {
    f.name: (floor, getattr(CEILINGS, f.name))
    for f, floor in zip(fields(Limits), (1.0, 1.0, 256, 16, 1024, 16, 1, 0.05), strict=True)
}


@dataclass(frozen=True)
class RunRequest:
    """One piece of code to run on one backend."""

    id: str
    code: str
    backend: Backend = Backend.AUTO
    limits: Limits = field(default_factory=Limits)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "code": self.code,
            "backend": self.backend.value,
            "limits": asdict(self.limits),
        }


@dataclass(frozen=True)
class RunResult:
    """How a run ended, with everything it printed (bounded) and what it used."""

    id: str
    verdict: Verdict
    exit_code: int | None
    stdout: str
    stderr: str
    wall_ms: int
    backend: str
    device: str
    detail: str = ""  # plain words on why, for anything but ok
    cpu_ms: int | None = None
    max_memory_mb: int | None = None
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        return cls(**{**data, "verdict": Verdict(data["verdict"])})


# Events a run streams before its result, as {"type": ..., ...} objects:
#   {"type": "queued", "position": 2}      waiting; 1 means next
#   {"type": "started", "backend": "cpu", "device": "..."}
#   {"type": "stdout", "data": "..."} / {"type": "stderr", "data": "..."}
#   {"type": "result", "result": {...RunResult...}}   always last
# and, instead of queueing, {"type": "busy", "retry_after": 5} when the queue is full.


RUN_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def check_code(code: object) -> str | None:
    """Why `code` cannot be run at all, or None when it is acceptable."""
    if not isinstance(code, str):
        return "code must be a string"
    try:
        size = len(code.encode("utf-8"))
    except UnicodeEncodeError:
        return "code is not valid UTF-8"
    if size > MAX_CODE_BYTES:
        return f"code is {size:,} bytes; the limit is {MAX_CODE_BYTES:,} (64 KiB)"
    return None


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    message = json.loads(line)
    if not isinstance(message, dict):
        raise ValueError("a message must be a JSON object")
    return message
