"""The worker's contract: verdicts, limits, streaming, queueing, recovery and refusal."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from sandbox import host
from sandbox.protocol import CEILINGS, MAX_CODE_BYTES, Limits, Verdict, check_code
from sandbox.worker import Worker
from tests.sandbox_worker import WorkerHandle, needs_isolation


def test_requested_limits_are_clamped_to_the_ceilings() -> None:
    limits = Limits.from_json({"wall_seconds": 10_000, "memory_mb": 1, "pids": 10**6, "bogus": 1})
    assert limits.wall_seconds == CEILINGS.wall_seconds
    assert limits.pids == CEILINGS.pids
    assert limits.memory_mb == 256  # the floor: torch needs room to import
    assert Limits.from_json(None) == Limits().clamped()


def test_code_checks() -> None:
    assert check_code("print(1)") is None
    assert "64 KiB" in (check_code("x" * (MAX_CODE_BYTES + 1)) or "")
    assert "UTF-8" in (check_code("\ud800") or "")
    assert check_code(b"bytes") == "code must be a string"


def test_verdicts_are_a_closed_set() -> None:
    assert {v.value for v in Verdict} == {
        "ok",
        "error",
        "timeout",
        "memory_limit",
        "output_limit",
        "killed",
        "rejected",
        "internal_error",
    }


def test_worker_refuses_to_run_code_where_it_cannot_isolate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(host, "isolation_problem", lambda: "no namespaces here")
    worker = Worker(cpu_slots=1, max_queue=2, state_dir=tmp_path)
    status = worker.status()
    assert status["available"] is False and "no namespaces here" in status["detail"]

    async def emit(_: dict[str, Any]) -> None:
        return None

    # A thread of its own: the browser tests' driver may hold this thread's event loop.
    with ThreadPoolExecutor(1) as pool:
        request = {"request": {"id": "r", "code": "print(1)"}}
        result = pool.submit(asyncio.run, worker.run(request, emit, [])).result()
    assert result.verdict is Verdict.INTERNAL_ERROR
    assert "cannot isolate" in result.detail and result.stdout == ""


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
def test_a_crashed_zygote_is_replaced(worker: WorkerHandle) -> None:
    out = subprocess.run(["pgrep", "-f", "sandbox.zygote cpu"], capture_output=True, text=True)
    for pid in out.stdout.split():
        if int(pid) != os.getpid():
            os.kill(int(pid), signal.SIGKILL)
    result = worker.run("print('after the crash')")
    # The run either finds the crash while forking (internal_error, with plain words) or
    # starts on the replacement; either way the next one runs.
    if result["verdict"] == "internal_error":
        assert "stopped unexpectedly" in result["detail"]
        result = worker.run("print('after the crash')")
    assert result["verdict"] == "ok" and result["stdout"] == "after the crash\n"


@needs_isolation
def test_cancel_stops_a_run(worker: WorkerHandle) -> None:
    import json
    import socket

    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(worker.socket_path))
        request = {
            "id": "cancel-me",
            "code": "import time\nprint('go', flush=True)\ntime.sleep(60)",
            "backend": "cpu",
        }
        s.sendall(json.dumps({"op": "run", "request": request}).encode() + b"\n")
        reader = s.makefile("rb")
        while json.loads(reader.readline())["type"] != "stdout":
            pass
        s.sendall(b'{"op": "cancel"}\n')
        while True:
            event = json.loads(reader.readline())
            if event["type"] == "result":
                break
    assert event["result"]["verdict"] == "killed"
    assert event["result"]["detail"] == "Cancelled."
    assert event["result"]["wall_ms"] < 10_000


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
