"""A real sandbox worker process, and a helper that runs code through its socket."""

from __future__ import annotations

import functools
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

from sandbox import cgroups, host
from sandbox.protocol import GRADING_VERSION, PROTOCOL_VERSION, event_from_json
from sandbox.worker import FIRST_UID

CANARY = "leak-canary"
# For tests that run code in the sandbox, as a decorator or `pytestmark = needs_isolation`:
# tests/conftest.py skips them where this host cannot isolate code. A marker rather than a
# skipif, so that nothing is asked of the host before a marked test is about to run.
needs_isolation = pytest.mark.isolation


@functools.cache
def delegated_home() -> Path | None:
    """Where test workers get cgroups of their own, on a cgroup v2 host whose cgroup for this
    process cannot hand controllers to runs (a shell's, where systemd delegates only to
    services; it also holds pytest): a folder under the hierarchy's root. None where a worker
    can use the cgroup it starts in (cgroup v1)."""
    try:
        return cgroups.layout.home_at_root("backprop-tests")
    except OSError:
        return None  # not root, or not writable: isolation_problem says why


def worker_layout(state_dir: Path) -> cgroups.Layout | None:
    """The cgroup a test worker with this state folder runs in, where it is not the one it
    starts in (see delegated_home); the same folder for the same state, so a restarted
    worker finds what its previous life left. Made here when missing."""
    home = delegated_home()
    if home is None:
        return None
    folder = home / cgroups.state_key(state_dir)
    folder.mkdir(exist_ok=True)
    return cgroups.Layout(version=2, unified=folder)


def worker_tree(state_dir: Path) -> cgroups.CgroupTree:
    """The run cgroups of the test worker with this state folder."""
    return cgroups.tree(cgroups.state_key(state_dir), worker_layout(state_dir))


@functools.cache
def isolation_problem() -> str | None:
    """Why this host cannot isolate code, or None. Found out once, on first need: it forks
    and creates cgroups, which merely importing the tests must not do."""
    probe = worker_layout(Path("isolation-probe"))
    try:
        return host.isolation_problem(probe)
    finally:
        if probe is not None and probe.unified is not None:
            cgroups.layout.remove_home(probe.unified)


def skip_unless_isolated() -> None:
    problem = isolation_problem()
    if problem is not None:
        pytest.skip(f"this host cannot isolate code: {problem}")


class WorkerHandle:
    def __init__(
        self, socket_path: Path, state_dir: Path | None = None, pid: int | None = None
    ) -> None:
        self.socket_path = socket_path
        self.state_dir = state_dir
        self.pid = pid  # the worker process, when started here
        self.states_seen: list[str] = []  # what its status said while it started, in order

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
        self,
        code: str,
        limits: dict[str, Any] | None = None,
        backend: str = "cpu",
        version: int = PROTOCOL_VERSION,
    ) -> dict[str, Any]:
        request = {
            "id": f"t{time.monotonic_ns()}",
            "code": code,
            "backend": backend,
            "limits": limits or {},
        }
        events = self.send({"op": "run", "v": version, "request": request})
        for event in events:
            event_from_json(event)  # each one is an event of the protocol, or this raises
        result: dict[str, Any] = events[-1]["result"]
        result["events"] = events[:-1]
        return result

    def grade(
        self,
        code: str,
        grading: dict[str, Any],
        limits: dict[str, Any] | None = None,
        backend: str = "cpu",
    ) -> dict[str, Any]:
        """A graded run (`grading`: a GradingRequest's JSON); the result, with its events."""
        request = {
            "id": f"g{time.monotonic_ns()}",
            "code": code,
            "backend": backend,
            "limits": limits or {},
            "grading": grading,
        }
        events = self.send({"op": "run", "v": GRADING_VERSION, "request": request})
        for event in events:
            event_from_json(event)
        result: dict[str, Any] = events[-1]["result"]
        result["events"] = events[:-1]
        return result

    def status(self) -> dict[str, Any]:
        return self.send({"op": "status"})[0]

    def wait_until_ready(self, process: subprocess.Popen[bytes], log: Path) -> None:
        """Poll the status until it says `ready`, noting each state it passes through."""
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the worker exited: {log.read_text()}")
            try:
                status = self.status()
            except OSError:
                status = {}  # not listening yet
            state = status.get("state")
            if state and state not in self.states_seen[-1:]:
                self.states_seen.append(state)
            if state == "ready":
                return
            if state == "unavailable":
                raise RuntimeError(f"the worker cannot run code: {status.get('detail')}")
            if time.monotonic() > deadline:
                raise RuntimeError("the worker did not become ready in 180 s")
            time.sleep(0.2)


def run_cgroups(state_dir: Path) -> list[Path]:
    """The folders of every run cgroup the worker with this state folder has now."""
    tree = worker_tree(state_dir)
    return [folder for cgroup in tree.leftovers() for folder in cgroup.folders()]


def host_paths() -> list[str]:
    """Paths of this checkout and of this Python on the host, which no run may see."""
    root = Path(__file__).resolve().parent.parent.parent
    found = {str(root), sys.prefix, sys.base_prefix, os.path.realpath(sys.executable)}
    return sorted(p for p in found if p not in ("/", "/usr", "/usr/local"))


def start_worker(base: Path, *args: str) -> tuple[subprocess.Popen[bytes], WorkerHandle]:
    """`python -m sandbox` with a canary secret in its environment, as the app would run it
    carelessly (nothing of it may reach a run); not waited for."""
    base.mkdir(parents=True, exist_ok=True)
    sock = base / "worker.sock"
    env = {**os.environ, "SECRET_KEY": CANARY, "DATABASE_URL": f"sqlite:///{CANARY}"}
    layout = worker_layout(base / "state")
    if layout is not None and layout.unified is not None:
        args = ("--cgroup", str(layout.unified), *args)
    with open(base / "worker.log", "ab") as log:
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
    return process, WorkerHandle(sock, base / "state", process.pid)


@contextmanager
def running_worker(base: Path, *args: str) -> Iterator[WorkerHandle]:
    """A started worker, ready to run code; stopped (SIGTERM) at the end."""
    skip_unless_isolated()
    process, handle = start_worker(base, *args)
    try:
        handle.wait_until_ready(process, base / "worker.log")
        yield handle
    finally:
        process.terminate()
        process.wait(timeout=20)
        layout = worker_layout(base / "state")
        if layout is not None and layout.unified is not None:
            cgroups.layout.remove_home(layout.unified)


def sandbox_processes() -> list[str]:
    """Host processes running as any sandbox user: there must be none between runs. Those
    of another sandbox worker on the same host (someone else's tests, a bench), which this
    process did not start, are not ours to count; one that has left its worker (reparented
    to init) is."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        # Runs' uids, their PID 1s' (+500), a graded run's grader's (+1000) and its PID 1's.
        if FIRST_UID <= uid < FIRST_UID + 2000 and not _under_another_worker(int(pid)):
            found.append(f"{pid} uid={uid} {status.splitlines()[0]}")
    return found


def _under_another_worker(pid: int) -> bool:
    """Whether `pid` descends from a sandbox worker that does not descend from us."""
    worker = False
    while pid > 1:
        if pid == os.getpid():
            return False
        try:
            worker = worker or b"\0-m\0sandbox\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False  # gone: count it, if it is still listed
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return worker
