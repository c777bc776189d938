"""A real sandbox worker process, and a helper that runs code through its socket."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from sandbox import host
from sandbox.worker import FIRST_UID

PROBLEM = host.isolation_problem()
needs_isolation = pytest.mark.skipif(
    PROBLEM is not None, reason=f"this host cannot isolate code: {PROBLEM}"
)
CANARY = "leak-canary"


class WorkerHandle:
    def __init__(self, socket_path: Path) -> None:
        self.socket_path = socket_path

    def send(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(self.socket_path))
            s.sendall(json.dumps(message).encode() + b"\n")
            events = []
            for line in s.makefile("rb"):
                events.append(json.loads(line))
                if events[-1]["type"] in ("result", "status", "error"):
                    break
            return events

    def run(
        self, code: str, limits: dict[str, Any] | None = None, backend: str = "cpu"
    ) -> dict[str, Any]:
        request = {
            "id": f"t{time.monotonic_ns()}",
            "code": code,
            "backend": backend,
            "limits": limits or {},
        }
        events = self.send({"op": "run", "request": request})
        result: dict[str, Any] = events[-1]["result"]
        result["events"] = events[:-1]
        return result

    def status(self) -> dict[str, Any]:
        return self.send({"op": "status"})[0]


@contextmanager
def running_worker(base: Path, *args: str) -> Iterator[WorkerHandle]:
    """`python -m sandbox` with a canary secret in its environment, as the app would run it
    carelessly; nothing of it may reach a run."""
    if PROBLEM is not None:
        pytest.skip(f"this host cannot isolate code: {PROBLEM}")
    base.mkdir(parents=True, exist_ok=True)
    sock = base / "worker.sock"
    env = {**os.environ, "SECRET_KEY": CANARY, "DATABASE_URL": f"sqlite:///{CANARY}"}
    log = open(base / "worker.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sandbox",
            "--socket",
            str(sock),
            "--state-dir",
            str(base / "state"),
            *args,
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    handle = WorkerHandle(sock)
    deadline = time.monotonic() + 180
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"the worker exited: {(base / 'worker.log').read_text()}")
        try:
            if handle.status().get("available"):
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError("the worker did not become ready in 180 s")
        time.sleep(0.2)
    try:
        yield handle
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def sandbox_processes() -> list[str]:
    """Host processes running as any sandbox user: there must be none between runs."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        if FIRST_UID <= uid < FIRST_UID + 1000:
            found.append(f"{pid} uid={uid} {status.splitlines()[0]}")
    return found
