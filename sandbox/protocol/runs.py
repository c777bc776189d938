"""One run: the request that asks for it, the verdict it ends with, and the result that
carries that verdict with what the code printed and used."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

from sandbox.protocol.grading import GradingReport, GradingRequest
from sandbox.protocol.limits import Limits
from sandbox.protocol.wire import GRADING_VERSION, PHASE_VERSION

MAX_CODE_BYTES = 64 * 1024
RUN_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
OWNER_RE = RUN_ID_RE  # an owner is opaque to the worker: a short key, compared and nothing more


def owner_cap(slots: int) -> int:
    """The most of a pool's `slots` that one owner's runs hold at once, however many it has
    waiting: all but one, so that a newcomer never waits behind one owner's long runs (a
    pool of one slot is simply taken in turns). Worker pools and fleet agents both keep it."""
    return max(1, slots - 1)


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


class StopReason(StrEnum):
    """Why the worker stopped a run before it ended by itself."""

    TIMEOUT = "timeout"  # wall-clock limit
    CPU = "cpu"  # CPU-time limit of the whole run
    OUTPUT = "output"  # printed past the output limit
    CANCEL = "cancel"  # the client asked, or went away
    UNIX_SOCKETS = "unix_sockets"  # held more Unix sockets than a run may (their buffers)


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
    grading: GradingReport | None = None  # a graded run's findings (protocol version 2)

    @classmethod
    def refused(
        cls, run_id: str, verdict: Verdict, detail: str, *, backend: str = "", device: str = ""
    ) -> RunResult:
        """A run that never started (or whose start failed): nothing printed, nothing used."""
        return cls(
            id=run_id,
            verdict=verdict,
            exit_code=None,
            stdout="",
            stderr="",
            wall_ms=0,
            backend=backend,
            device=device,
            detail=detail,
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        data.pop("grading")  # a plain run's result is as it was before graded runs
        if self.grading is not None:
            data["grading"] = self.grading.to_json()
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunResult:
        """Unknown fields are ignored, so a newer worker's additions do no harm."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        grading = data.get("grading")
        values["grading"] = GradingReport.from_json(grading) if grading else None
        return cls(**{**values, "verdict": Verdict(data["verdict"])})


@dataclass(frozen=True)
class RunRequest:
    """One piece of code to run on one backend, for an owner whose runs share the slots
    fairly with everyone else's (None: a run of its own, sharing with nobody)."""

    id: str
    code: str
    backend: Backend = Backend.AUTO
    limits: Limits = field(default_factory=Limits)
    owner: str | None = None
    # A graded run: the code is graded against this exercise (sandbox/README.md, "Grading").
    grading: GradingRequest | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "code": self.code,
            "backend": self.backend.value,
            "limits": asdict(self.limits),
        }
        if self.owner is not None:
            data["owner"] = self.owner
        if self.grading is not None:
            data["grading"] = self.grading.to_json()
        return data

    def protocol_version(self) -> int:
        """The lowest protocol version that carries this request and what it streams back: a
        graded run's tests (version 2); a plain run's phases (version 3)."""
        return GRADING_VERSION if self.grading is not None else PHASE_VERSION

    @classmethod
    def from_json(cls, data: object) -> RunRequest | RunResult:
        """The request, or the `rejected` result that answers it when it is malformed."""
        request = data if isinstance(data, dict) else {}
        run_id = request.get("id")
        backend = request.get("backend", Backend.AUTO.value)
        # Echoed in a rejection only when it is short text: never a client's object back.
        shown_backend = backend if isinstance(backend, str) and len(backend) <= 16 else ""
        if not isinstance(run_id, str) or not RUN_ID_RE.match(run_id):
            return RunResult.refused(
                "", Verdict.REJECTED, "A run id is 1 to 64 letters, digits, - or _."
            )

        def reject(detail: str) -> RunResult:
            return RunResult.refused(run_id, Verdict.REJECTED, detail, backend=shown_backend)

        problem = check_code(request.get("code"))
        if problem:
            return reject(problem[0].upper() + problem[1:] + ".")
        # The isinstance first: a list or an object is not hashable, so `in` would raise.
        if not isinstance(backend, str) or backend not in {b.value for b in Backend}:
            return reject(f"Unknown backend '{shown_backend}': use cpu, cuda or auto.")
        try:
            limits = Limits.from_json(request.get("limits"))
        except ValueError as exc:
            return reject(f"Bad limits: {exc}.")
        owner = request.get("owner")
        if owner is not None and not (isinstance(owner, str) and OWNER_RE.match(owner)):
            return reject("An owner is 1 to 64 letters, digits, - or _.")
        grading = None
        if request.get("grading") is not None:
            try:
                grading = GradingRequest.from_json(request["grading"])
            except ValueError as exc:
                return reject(f"Bad grading: {exc}.")
        return cls(
            id=run_id,
            code=request["code"],
            backend=Backend(backend),
            limits=limits,
            owner=owner,
            grading=grading,
        )
