"""The sandbox contract: what a run asks for, what it streams, and the verdict it ends with.

Messages travel as JSON lines over the worker's Unix socket. This package has no dependency
beyond the standard library so that the worker, the app and tests share it unchanged.

    client → worker   {"op": "status"}
                      {"op": "run", "v": PROTOCOL_VERSION, "request": {...RunRequest...}}
                      {"op": "cancel"}                      (during a run)
    worker → client   {"type": "status", ...WorkerStatus...}
                      events (Queued, Started, Output, Phase, Busy, TestDone),
                      then {"type": "result", ...}

Its parts: `limits` (what a run may use), `runs` (request, verdict, result), `grading` (a
graded run's payload and findings), `events` (what a run streams), `status` (what a worker
can do) and `wire` (framing and version). Import the
names from here: which part holds one is not part of the contract.
"""

from sandbox.protocol.events import (
    Busy,
    Emit,
    Event,
    Finished,
    Output,
    Phase,
    Queued,
    Started,
    TestDone,
    event_from_json,
    event_to_json,
)
from sandbox.protocol.grading import (
    GradingReport,
    GradingRequest,
    GradingVerdict,
    Mode,
    TestResult,
    TestStatus,
)
from sandbox.protocol.limits import CEILINGS, FLOORS, Limits
from sandbox.protocol.runs import (
    MAX_CODE_BYTES,
    RUN_ID_RE,
    Backend,
    RunRequest,
    RunResult,
    StopReason,
    Verdict,
    check_code,
    owner_cap,
)
from sandbox.protocol.status import WorkerState, WorkerStatus
from sandbox.protocol.wire import (
    GRADING_VERSION,
    OLDEST_VERSION,
    PHASE_VERSION,
    PROTOCOL_VERSION,
    decode,
    encode,
)

__all__ = [
    "CEILINGS",
    "FLOORS",
    "GRADING_VERSION",
    "MAX_CODE_BYTES",
    "OLDEST_VERSION",
    "PHASE_VERSION",
    "PROTOCOL_VERSION",
    "RUN_ID_RE",
    "Backend",
    "Busy",
    "Emit",
    "Event",
    "Finished",
    "GradingReport",
    "GradingRequest",
    "GradingVerdict",
    "Limits",
    "Mode",
    "Output",
    "Phase",
    "Queued",
    "RunRequest",
    "RunResult",
    "Started",
    "StopReason",
    "TestDone",
    "TestResult",
    "TestStatus",
    "Verdict",
    "WorkerState",
    "WorkerStatus",
    "check_code",
    "decode",
    "encode",
    "event_from_json",
    "event_to_json",
    "owner_cap",
]
