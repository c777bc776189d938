"""What a run streams to its client before (and as) its end. On the wire each event is one
{"type": ..., ...} object; in the worker and the app it is one of these typed values."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

from sandbox.protocol.grading import TestResult
from sandbox.protocol.runs import RunResult


@dataclass(frozen=True)
class Queued:
    """Waiting for a slot; position 1 means next. Sent again whenever it changes.
    `estimate_seconds`: about how long until it starts, from how long this backend's recent
    runs took (None until it has seen some)."""

    position: int
    estimate_seconds: float | None = None
    type: Literal["queued"] = "queued"


@dataclass(frozen=True)
class Started:
    """The code is running on `backend` (`device` names the hardware)."""

    backend: str
    device: str
    type: Literal["started"] = "started"


@dataclass(frozen=True)
class Output:
    """Text the code printed (UTF-8, invalid bytes replaced)."""

    stream: Literal["stdout", "stderr"]
    data: str

    @property
    def type(self) -> str:
        return self.stream  # the wire names the stream itself: {"type": "stdout", ...}


@dataclass(frozen=True)
class Phase:
    """The code (the lab harness) has begun `phase`: "compiling" or "running". Compiling
    is timed against `allowance_seconds` of its own before the run's limit (phases.py).
    "warming": before it starts, the run waits for the server's own compile of the same
    program, which it then loads (warming.py); that wait is not charged to the run."""

    phase: Literal["compiling", "running", "warming"]
    allowance_seconds: float
    type: Literal["phase"] = "phase"


@dataclass(frozen=True)
class Busy:
    """The queue is full: a `rejected` result follows; try again after `retry_after` s."""

    retry_after: int
    type: Literal["busy"] = "busy"


@dataclass(frozen=True)
class TestDone:
    """A graded run: one test has ended (sent as each one does, in order)."""

    __test__ = False  # not a pytest test class

    test: TestResult
    type: Literal["test"] = "test"


@dataclass(frozen=True)
class Finished:
    """Always the last event of a run."""

    result: RunResult
    type: Literal["result"] = "result"


Event = Queued | Started | Output | Phase | Busy | TestDone | Finished
# How the worker hands one event to its client (written to the socket as it comes).
Emit = Callable[[Event], Awaitable[None]]


def event_to_json(event: Event) -> dict[str, Any]:
    if isinstance(event, Output):
        return {"type": event.stream, "data": event.data}
    if isinstance(event, Finished):
        return {"type": "result", "result": event.result.to_json()}
    if isinstance(event, TestDone):
        return {"type": "test", "test": event.test.to_json()}
    return asdict(event)


def event_from_json(data: dict[str, Any]) -> Event:
    """The event a message carries; ValueError for anything that is not one."""
    try:
        kind = data["type"]
        if kind in ("stdout", "stderr"):
            return Output(kind, str(data["data"]))
        if kind == "queued":
            estimate = data.get("estimate_seconds")
            return Queued(int(data["position"]), None if estimate is None else float(estimate))
        if kind == "started":
            return Started(str(data["backend"]), str(data["device"]))
        if kind == "phase":
            phase = str(data["phase"])
            if phase not in ("compiling", "running", "warming"):
                raise ValueError(f"unknown phase {phase!r}")
            return Phase(phase, float(data["allowance_seconds"]))  # type: ignore[arg-type]
        if kind == "busy":
            return Busy(int(data["retry_after"]))
        if kind == "test":
            return TestDone(TestResult.from_json(data["test"]))
        if kind == "result":
            return Finished(RunResult.from_json(data["result"]))
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed event: {exc}") from None
    raise ValueError(f"unknown event type {kind!r}")
