"""What lives and dies with the worker: jails die with it, a new worker on the same state
folder cleans up what its previous life left, every slot runs as its own user, and the
socket is open to root and to the web server's user alone."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox import host
from sandbox.protocol import PROTOCOL_VERSION
from sandbox.runner import INIT_UID_OFFSET
from sandbox.worker import Worker
from tests.sandbox.conftest import WarmUp
from tests.support.aio import run_async
from tests.support.sandbox_worker import (
    needs_isolation,
    run_cgroups,
    running_worker,
    sandbox_processes,
    start_worker,
    worker_tree,
)


def test_every_slot_of_every_pool_runs_as_a_user_of_its_own(
    warm_up: WarmUp, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(host, "probe_cuda", lambda env: "Fake GPU")
    worker = Worker(cpu_slots=3, max_queue=2, state_dir=tmp_path / "state")

    async def scenario() -> None:
        start = asyncio.create_task(worker.start())
        while warm_up.over is None:
            await asyncio.sleep(0.01)
        warm_up.end()  # both pools' zygotes are "warm" now
        await start

    run_async(scenario())
    assert set(worker.pools) == {"cpu", "cuda"}
    assert worker.status().absent == {}  # nothing to explain: both backends are offered
    uids = [uid for pool in worker.pools.values() for uid in pool.uids()]
    assert len(uids) == 4 and len(set(uids)) == 4  # the GPU slot shares no uid
    init_uids = {uid + INIT_UID_OFFSET for uid in uids}
    assert not init_uids & set(uids)
    passwd = (tmp_path / "state" / "etc" / "passwd").read_text()
    for uid in uids:
        assert f"sandbox:x:{uid}:{uid}:" in passwd  # each run user has a name in the jail


def start_long_run(sock: Path) -> socket.socket:
    """A run that forks and sleeps; returns once it has printed (so it is surely running)."""
    client = socket.socket(socket.AF_UNIX)
    client.connect(str(sock))
    code = "import os, time\nos.fork()\nprint('go', flush=True)\ntime.sleep(600)\n"
    request = {"id": "long", "code": code, "backend": "cpu"}
    client.sendall(json.dumps({"op": "run", "v": PROTOCOL_VERSION, "request": request}).encode())
    client.sendall(b"\n")
    reader = client.makefile("rb")
    while json.loads(reader.readline())["type"] != "stdout":
        pass
    return client


def wait_until(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@needs_isolation
def test_jails_die_with_the_worker_and_its_next_life_sweeps_what_is_left(
    tmp_path: Path,
) -> None:
    base = tmp_path / "w"
    process, handle = start_worker(base)
    assert handle.state_dir is not None
    try:
        handle.wait_until_ready(process, base / "worker.log")
        client = start_long_run(handle.socket_path)
        [run] = worker_tree(handle.state_dir).leftovers()
        jailed = run.pids()
        assert len(jailed) >= 3  # the supervisor, the jail's PID 1, the code and its fork
        process.send_signal(signal.SIGKILL)
        process.wait()
        client.close()
        # Zygote, supervisor and PID 1 each die with their parent: nothing of the jail is left.
        assert wait_until(lambda: not any(os.path.exists(f"/proc/{p}") for p in jailed), 5)

        # A cgroup the dead worker left (the kill came mid-run), with a process in it, as if
        # a jail had outlived it.
        tree = worker_tree(handle.state_dir)
        planted = tree.create(memory_mb=256, pids=16, cpus=1)
        joins = "; ".join(f"echo $$ > {f}" for f in planted.procs_files())
        straggler = subprocess.Popen(["sh", "-c", f"{joins}; exec sleep 600"])
        assert wait_until(lambda: straggler.pid in planted.pids(), 5)
        assert len(run_cgroups(handle.state_dir)) >= 2

        process, handle = start_worker(base)  # its next life, on the same state folder
        handle.wait_until_ready(process, base / "worker.log")
        assert straggler.wait(timeout=5) == -signal.SIGKILL
        assert run_cgroups(handle.state_dir) == []
        assert wait_until(lambda: sandbox_processes() == [], 5), sandbox_processes()
        assert handle.run("print('after')")["stdout"] == "after\n"
    finally:
        process.terminate()  # a clean stop: it removes its (empty) cgroup folders
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder every user may pass through (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="sandbox-socket-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def status_as(uid: int, sock: Path) -> str:
    """Ask for the status as `uid`, in a child process: 'status', or the error's name."""
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            try:
                with socket.socket(socket.AF_UNIX) as s:
                    s.connect(str(sock))
                    s.sendall(b'{"op": "status"}\n')
                    answer = json.loads(s.makefile("rb").readline())["type"]
            except OSError as exc:
                answer = type(exc).__name__
            os.write(write, answer.encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as f:
        return f.read()


@needs_isolation
def test_the_socket_is_open_to_root_and_the_client_user_alone(open_folder: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    process, handle = start_worker(open_folder, "--client-uid", "65534")
    try:
        assert wait_until(lambda: handle.socket_path.exists(), 30)
        assert wait_until(lambda: _answers(handle.socket_path), 30)
        info = handle.socket_path.stat()
        assert info.st_uid == 65534 and info.st_mode & 0o777 == 0o600
        assert status_as(65534, handle.socket_path) == "status"
        assert status_as(65533, handle.socket_path) == "PermissionError"
        assert handle.status()["type"] == "status"  # and root, of course
    finally:
        process.terminate()
        process.wait(timeout=60)


def _answers(sock: Path) -> bool:
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(sock))
            s.sendall(b'{"op": "status"}\n')
            return bool(s.makefile("rb").readline())
    except OSError:
        return False


# Starts the worker with a parent-death signal, drops root (as `backprop serve` does for the
# web server) and exits: the kernel then drops that signal, so only --parent-pid stops it.
PARENT = """
import ctypes, os, signal, subprocess, sys
base = sys.argv[1]
worker = subprocess.Popen(
    [sys.executable, "-m", "sandbox", "--socket", base + "/s.sock", "--state-dir",
     base + "/state", "--parent-pid", str(os.getpid())],
    stdout=open(base + "/worker.log", "wb"), stderr=subprocess.STDOUT,
    preexec_fn=lambda: ctypes.CDLL(None).prctl(1, signal.SIGTERM, 0, 0, 0),
)
print(worker.pid, flush=True)
os.setgid(65534)
os.setuid(65534)
"""


@needs_isolation
def test_a_worker_told_its_parent_stops_when_that_parent_has_dropped_root_and_exited(
    tmp_path: Path,
) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    started = subprocess.run(
        [sys.executable, "-c", PARENT, str(tmp_path)], capture_output=True, text=True, check=True
    )
    worker = int(started.stdout)
    try:
        # It finishes warming up first (a minute at most on a loaded machine), then stops.
        assert wait_until(lambda: not os.path.exists(f"/proc/{worker}"), 90)
        assert "has exited" in (tmp_path / "worker.log").read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker, signal.SIGKILL)


@needs_isolation
def test_a_second_worker_on_a_live_socket_refuses_to_start(tmp_path: Path) -> None:
    """It would otherwise take the socket away from the worker already serving on it."""
    with running_worker(tmp_path / "first") as first:
        second = subprocess.run(
            [
                sys.executable,
                "-m",
                "sandbox",
                "--socket",
                str(first.socket_path),
                "--state-dir",
                str(tmp_path / "second-state"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode != 0 and "already listens" in second.stderr
        assert first.status()["available"]  # the first still answers
