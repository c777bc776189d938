"""What a worker can do right now: its answer to {"op": "status"}, and the app's health."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from sandbox.protocol.wire import PROTOCOL_VERSION


class WorkerState(StrEnum):
    READY = "ready"  # runs code
    STARTING = "starting"  # warming up (importing torch); runs wait for it
    UNAVAILABLE = "unavailable"  # cannot run code here (or cannot be reached): `detail` says why


@dataclass(frozen=True)
class WorkerStatus:
    """What a worker can do right now: the answer to {"op": "status"} and the app's health."""

    state: WorkerState
    backends: list[str]
    device: str | None  # the device `auto` runs on
    devices: dict[str, str]  # backend → device name
    detail: str  # plain words: "ready", or why not
    queue: dict[str, int] = field(default_factory=dict)  # runs waiting per backend
    # backend → its compile cache in words: "off", "warming: 3 of 17 samples compiled", "ready: …"
    compile_cache: dict[str, str] = field(default_factory=dict)
    slots: dict[str, int] = field(default_factory=dict)  # runs each backend runs at once
    absent: dict[str, str] = field(default_factory=dict)  # backend → why it is not offered
    protocol: int = PROTOCOL_VERSION
    # Whether it runs code now. Derived from `state`, never passed: a field (not a property)
    # so that every serialisation of the status, the app's health included, carries it.
    available: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "available", self.state is WorkerState.READY)

    @classmethod
    def unavailable(cls, detail: str) -> WorkerStatus:
        return cls(WorkerState.UNAVAILABLE, [], None, {}, detail)

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "state": self.state.value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkerStatus:
        """A status message; ValueError when it is not one."""
        try:
            return cls(
                state=WorkerState(data["state"]),
                backends=[str(b) for b in data["backends"]],
                device=data.get("device"),
                devices={str(k): str(v) for k, v in (data.get("devices") or {}).items()},
                detail=str(data.get("detail", "")),
                queue={str(k): int(v) for k, v in (data.get("queue") or {}).items()},
                compile_cache={
                    str(k): str(v) for k, v in (data.get("compile_cache") or {}).items()
                },
                slots={str(k): int(v) for k, v in (data.get("slots") or {}).items()},
                absent={str(k): str(v) for k, v in (data.get("absent") or {}).items()},
                protocol=int(data.get("protocol", 0)),
            )
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"malformed status: {exc}") from None
