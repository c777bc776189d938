"""The worker's contract: verdicts, limits, streaming, queueing, recovery and refusal."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from sandbox import host
from sandbox.protocol import (
    MAX_CODE_BYTES,
    PROTOCOL_VERSION,
    Backend,
    Event,
    RunRequest,
    RunResult,
    Verdict,
    WorkerState,
    WorkerStatus,
)
from sandbox.worker import Worker
from sandbox.zygote_client import zygote_env
from tests.sandbox.conftest import WarmUp
from tests.support.aio import run_async
from tests.support.sandbox_worker import WorkerHandle, needs_isolation


async def no_events(event: Event) -> None:
    raise AssertionError(f"no event was expected, got {event}")


def test_worker_refuses_to_run_code_where_it_cannot_isolate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(host, "isolation_problem", lambda: "no namespaces here")
    worker = Worker(cpu_slots=1, max_queue=2, state_dir=tmp_path)
    status = worker.status()
    assert status.state is WorkerState.UNAVAILABLE and not status.available
    assert "no namespaces here" in status.detail
    message = worker.status_message()
    assert message["type"] == "status" and message["state"] == "unavailable"
    assert message["available"] is False

    request = RunRequest("r", "print(1)")
    result = run_async(worker.run(request, no_events, []))
    assert result.verdict is Verdict.INTERNAL_ERROR
    assert "cannot isolate" in result.detail and result.stdout == ""


def test_status_says_starting_until_the_zygotes_are_warm_and_runs_wait(
    warm_up: WarmUp, tmp_path: Path
) -> None:
    worker = Worker(cpu_slots=1, max_queue=2, state_dir=tmp_path / "state")
    events: list[Event] = []

    async def emit(event: Event) -> None:
        events.append(event)

    async def scenario() -> tuple[WorkerStatus, bool, WorkerStatus, RunResult]:
        start = asyncio.create_task(worker.start())
        await asyncio.sleep(0)
        starting = worker.status()
        # A cuda run on a host without a GPU: once the worker is ready, rejected at once.
        run = asyncio.create_task(worker.run(RunRequest("r", "1", Backend.CUDA), emit, []))
        await asyncio.sleep(0.1)
        waited = not run.done()
        warm_up.end()
        await start
        return starting, waited, worker.status(), await run

    starting, waited, ready, result = run_async(scenario())
    assert starting.state is WorkerState.STARTING and not starting.available
    assert starting.detail == "starting: loading PyTorch"
    assert starting.backends == ["cpu"]
    assert worker.status_message()["state"] == "ready"
    assert waited and events == []  # it waited, and was told nothing meanwhile
    assert ready.state is WorkerState.READY and ready.available and ready.detail == "ready"
    assert ready.backends == ["cpu"] and ready.queue == {"cpu": 0}
    assert result.verdict is Verdict.REJECTED and "no CUDA GPU" in result.detail


def test_a_worker_that_could_not_start_says_why_and_runs_nothing(
    warm_up: WarmUp, tmp_path: Path
) -> None:
    worker = Worker(cpu_slots=1, max_queue=2, state_dir=tmp_path / "state")
    warm_up.fail = True

    async def scenario() -> RunResult:
        start = asyncio.create_task(worker.start())
        run = asyncio.create_task(worker.run(RunRequest("r", "1"), no_events, []))
        await asyncio.sleep(0)
        warm_up.end()
        await start
        return await run

    result = run_async(scenario())
    assert result.verdict is Verdict.INTERNAL_ERROR and result.id == "r"
    assert "cpu warm process exited while starting" in result.detail
    status = worker.status()
    assert status.state is WorkerState.UNAVAILABLE and "could not start" in status.detail


@needs_isolation
def test_output_streams_as_events_before_the_result(worker: WorkerHandle) -> None:
    result = worker.run(
        "import sys, time\nprint('a', flush=True)\ntime.sleep(0.3)\n"
        "print('b', file=sys.stderr)\nraise SystemExit(3)"
    )
    kinds = [e["type"] for e in result["events"]]
    assert kinds[0] == "started"
    assert {"type": "stdout", "data": "a\n"} in result["events"]
    assert {"type": "stderr", "data": "b\n"} in result["events"]
    assert result["verdict"] == "error" and result["exit_code"] == 3
    assert result["stdout"] == "a\n" and result["stderr"] == "b\n"


@needs_isolation
def test_tracebacks_point_at_the_sample_not_the_sandbox(worker: WorkerHandle) -> None:
    result = worker.run("x = 1\n1 / 0\n")
    assert result["verdict"] == "error"
    assert 'File "sample.py", line 2' in result["stderr"]
    assert "ZeroDivisionError" in result["stderr"]
    assert "jail.py" not in result["stderr"]


@needs_isolation
def test_bad_requests_are_rejected_without_running(worker: WorkerHandle) -> None:
    assert worker.run("x" * (MAX_CODE_BYTES + 10))["verdict"] == "rejected"
    assert worker.run("print(1)", backend="tpu")["verdict"] == "rejected"
    if "cuda" not in worker.status()["backends"]:
        result = worker.run("print(1)", backend="cuda")
        assert result["verdict"] == "rejected" and "no CUDA GPU" in result["detail"]


@needs_isolation
def test_a_run_in_another_protocol_version_is_rejected(worker: WorkerHandle) -> None:
    request = {"id": "old-client", "code": "print(1)", "backend": "cpu"}
    for message in (
        {"op": "run", "request": request},
        {"op": "run", "v": PROTOCOL_VERSION + 1, "request": request},
    ):
        [event] = worker.send(message)
        result = event["result"]
        assert event["type"] == "result" and result["verdict"] == "rejected"
        assert result["id"] == "old-client" and result["stdout"] == ""
        assert f"speaks protocol version {PROTOCOL_VERSION}" in result["detail"]


@needs_isolation
def test_status_says_ready_and_said_starting_while_it_warmed(worker: WorkerHandle) -> None:
    message = worker.status()
    assert message["type"] == "status"
    status = WorkerStatus.from_json(message)
    assert status.state is WorkerState.READY and message["available"] is True
    assert status.detail == "ready" and status.protocol == PROTOCOL_VERSION
    assert "cpu" in status.backends and status.devices["cpu"]
    # What an agent in front of it takes at once: by default one per core.
    assert status.slots["cpu"] == os.cpu_count() and status.slots.get("cuda", 1) == 1
    # The socket answered before the zygote was warm (it takes seconds to import torch).
    assert worker.states_seen[0] == "starting" and worker.states_seen[-1] == "ready"


@needs_isolation
def test_malformed_messages_get_an_error(worker: WorkerHandle) -> None:
    assert worker.send({"op": "dance"}) == [
        {"type": "error", "detail": "op must be 'status' or 'run'"}
    ]
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(worker.socket_path))
        s.sendall(b"[1, 2]\n")
        reply = json.loads(s.makefile("rb").readline())
    assert reply == {"type": "error", "detail": "each message must be one JSON object"}


@needs_isolation
def test_auto_backend_picks_what_the_host_has(worker: WorkerHandle) -> None:
    result = worker.run("print('hi')", backend="auto")
    expected = "cuda" if "cuda" in worker.status()["backends"] else "cpu"
    assert result["verdict"] == "ok" and result["backend"] == expected


@needs_isolation
def test_two_runs_at_once_cannot_see_each_other(worker: WorkerHandle) -> None:
    writer = (
        "import os, time\n"
        "open('/tmp/secret-of-a', 'w').write('A')\n"
        "print('pid', os.getpid(), 'uid', os.getuid(), flush=True)\n"
        "time.sleep(3)\n"
        "print('still alone:', os.listdir('/tmp'))\n"
    )
    spy = (
        "import os, time\n"
        "time.sleep(1)\n"
        "print('tmp:', os.listdir('/tmp'))\n"
        "print('procs:', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\n"
        "print('uid', os.getuid())\n"
    )
    results: dict[str, dict[str, Any]] = {}
    threads = [
        threading.Thread(target=lambda: results.__setitem__("a", worker.run(writer))),
        threading.Thread(target=lambda: results.__setitem__("b", worker.run(spy))),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    a, b = results["a"], results["b"]
    assert a["verdict"] == b["verdict"] == "ok"
    # (/tmp may also hold the read-only mount point of a checkout that lives under /tmp.)
    assert "tmp:" in b["stdout"] and "secret-of-a" not in b["stdout"]
    assert "secret-of-a" in a["stdout"].split("still alone:")[1]
    assert a["stdout"].split("uid ")[1].split()[0] != b["stdout"].split("uid ")[1].split()[0]


@needs_isolation
def test_the_zygote_starts_with_exactly_the_environment_the_worker_chose(
    worker: WorkerHandle,
) -> None:
    # Among it, the OpenMP wait policy: libgomp reads it when torch loads, in the zygote, so
    # it must be in the zygote's own environment (sandbox/README.md, "Runs side by side").
    assert worker.pid is not None
    out = subprocess.run(
        ["pgrep", "-P", str(worker.pid), "-f", "sandbox.zygote cpu"],
        capture_output=True,
        text=True,
    )
    (pid,) = out.stdout.split()
    entries = Path(f"/proc/{pid}/environ").read_bytes().decode().split("\0")
    started_with = dict(e.split("=", 1) for e in entries if e)
    assert started_with.pop("PYTHONPATH")  # the neutral paths launch.py adds
    assert started_with == zygote_env("cpu")
    assert started_with["OMP_WAIT_POLICY"] == "PASSIVE"


@needs_isolation
def test_a_crashed_zygote_is_replaced(worker: WorkerHandle) -> None:
    # This worker's zygote only (other workers may be running on this host).
    assert worker.pid is not None
    out = subprocess.run(
        ["pgrep", "-P", str(worker.pid), "-f", "sandbox.zygote cpu"],
        capture_output=True,
        text=True,
    )
    assert out.stdout.split(), "no zygote found"
    for pid in out.stdout.split():
        os.kill(int(pid), signal.SIGKILL)
    result = worker.run("print('after the crash')")
    # The run either finds the crash while forking (internal_error, with plain words) or
    # starts on the replacement; either way the next one runs.
    if result["verdict"] == "internal_error":
        assert "stopped unexpectedly" in result["detail"]
        result = worker.run("print('after the crash')")
    assert result["verdict"] == "ok" and result["stdout"] == "after the crash\n", (
        result["detail"],
        result["stderr"],
    )


def cancelled_when(worker: WorkerHandle, run_id: str, code: str, at: str) -> dict[str, Any]:
    """Start `code`, cancel it at its first event of type `at`; its result."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(worker.socket_path))
        s.settimeout(30)  # a lost cancel fails here, not after the run's whole minute
        request = {"id": run_id, "code": code, "backend": "cpu"}
        message = {"op": "run", "v": PROTOCOL_VERSION, "request": request}
        s.sendall(json.dumps(message).encode() + b"\n")
        reader = s.makefile("rb")
        while json.loads(reader.readline())["type"] != at:
            pass
        s.sendall(b'{"op": "cancel"}\n')
        while (event := json.loads(reader.readline()))["type"] != "result":
            pass
    result: dict[str, Any] = event["result"]
    return result


@needs_isolation
def test_cancel_stops_a_run(worker: WorkerHandle) -> None:
    code = "import time\nprint('go', flush=True)\ntime.sleep(60)"
    result = cancelled_when(worker, "cancel-me", code, at="stdout")
    assert result["verdict"] == "killed"
    assert result["detail"] == "Cancelled."
    assert result["wall_ms"] < 10_000


@needs_isolation
def test_a_cancel_just_after_the_fork_still_stops_the_run(worker: WorkerHandle) -> None:
    """Cancelled the moment it starts, before its processes may have joined their cgroup
    (a first kill then finds the cgroup empty): the run still ends at once, every time. A
    lost cancel let a 60 s run go on to its end."""
    for attempt in range(8):
        code = "import time\ntime.sleep(60)"
        result = cancelled_when(worker, f"cancel-early-{attempt}", code, at="started")
        assert result["verdict"] == "killed", result
        assert result["wall_ms"] < 10_000


def test_seccomp_filter_jumps_stay_inside_the_program() -> None:
    """Every conditional jump lands on an instruction, and each path ends in a return."""
    import struct

    from sandbox.seccomp import build_filter

    program = build_filter()
    insns = [struct.unpack("HBBI", program[i : i + 8]) for i in range(0, len(program), 8)]
    for index, (code, jt, jf, _k) in enumerate(insns):
        if code & 0x07 == 0x05:  # BPF_JMP
            assert index + 1 + max(jt, jf) < len(insns)
    assert insns[-1][0] == 0x06  # the last instruction returns
