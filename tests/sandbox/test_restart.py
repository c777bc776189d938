"""A crashed server never leaves a run "running": `backprop serve` is SIGKILLed, process group
and all, in the middle of a 40 s run, and started again at once on the same DATA_DIR. The run
ends `internal_error` within seconds and its event stream sends that result and closes.

The killed processes stay zombies, as they do under an init that reaps late: each server is
started by a holder that is their subreaper and never reaps them. A zombie's /proc entry
still shows its pid and start time, which once made the new server judge its predecessor
alive and leave the run running for good."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from app.runs.orphans import process_stat
from app.settings import PROJECT_ROOT
from tests.support import databases
from tests.support.processes import free_port
from tests.support.sandbox_worker import needs_isolation

pytestmark = needs_isolation

# Starts the command in a session of its own (so it can be killed as one group), prints its
# pid, and keeps whatever it leaves behind unreaped until its stdin closes; then it reaps
# them all (this host's init may not).
HOLDER = """
import ctypes, os, subprocess, sys
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
child = subprocess.Popen(sys.argv[1:], start_new_session=True)
print(child.pid, flush=True)
sys.stdin.read()
try:
    while True:
        os.wait()
except ChildProcessError:
    pass
"""
SLEEPER = "import time\nprint('going to sleep', flush=True)\ntime.sleep(40)\n"


class Server:
    """One `backprop serve` under a holder; `pid` is the supervisor's, and its group's."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.holder = subprocess.Popen(
            [sys.executable, "-c", HOLDER, sys.executable, "-m", "app.cli", "serve"],
            cwd=PROJECT_ROOT,
            env={**env, "PORT": str(self.port)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.holder.stdout is not None
        self.pid = int(self.holder.stdout.readline())

    def wait_ready(self, timeout_seconds: float = 180) -> None:
        deadline = time.monotonic() + timeout_seconds
        while True:
            try:
                if get_json(f"{self.base}/api/health")["sandbox"]["available"]:
                    return
            except (OSError, KeyError, ValueError):
                pass
            assert state_of(self.pid) not in (None, "Z"), "backprop serve exited"
            assert time.monotonic() < deadline, "the app or its sandbox did not become ready"
            time.sleep(0.5)

    def kill_group(self) -> None:
        os.killpg(self.pid, signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM to the supervisor (it stops the rest), then the holder lets all go."""
        if state_of(self.pid) not in (None, "Z"):
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 30
            while state_of(self.pid) not in (None, "Z") and time.monotonic() < deadline:
                time.sleep(0.2)
        assert self.holder.stdin is not None
        self.holder.stdin.close()
        self.holder.wait(timeout=30)


def state_of(pid: int) -> str | None:
    stat = process_stat(pid)
    return stat.state if stat else None


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, by parent pid."""
    parents: dict[int, int] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        kids = [p for p, parent in parents.items() if parent in frontier]
        found += kids
        frontier = kids
    return found


def web_process(supervisor: int) -> int:
    """The web server: the supervisor's child that is not the sandbox worker."""
    for pid in descendants(supervisor):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_text()
        except OSError:
            continue
        if "app.cli" in command and "sandbox" not in command:
            return pid
    raise AssertionError("no web server process")


def get_json(url: str, body: dict[str, Any] | None = None) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


@pytest.fixture
def data_env(imported_db_template: str) -> Iterator[dict[str, str]]:
    """The environment of both servers: the same DATA_DIR (and database)."""
    # A folder the web server's user can reach (pytest's own temporary folders are root's).
    base_dir = Path(tempfile.mkdtemp(prefix="backprop-restart-"))
    base_dir.chmod(0o755)
    data = base_dir / "data"
    with ExitStack() as stack:
        database = (
            {"DATABASE_URL": stack.enter_context(databases.copy_of(imported_db_template, data))}
            if databases.on_postgres()
            else {}
        )
        yield {
            **os.environ,
            **database,
            "DATA_DIR": str(data),
            "SECRET_KEY": "restart-test",
            "COMPILE_CACHE_WARM": "false",  # minutes of background CPU the test does not need
        }
        shutil.rmtree(base_dir, ignore_errors=True)


def test_a_run_of_a_killed_server_ends_at_once_when_it_restarts(data_env: dict[str, str]) -> None:
    first = Server(data_env)
    second: Server | None = None
    try:
        first.wait_ready()
        run = get_json(f"{first.base}/api/runs", {"code": SLEEPER, "backend": "cpu"})
        run_url = f"{{}}/api/runs/{run['id']}?token={run['token']}"
        deadline = time.monotonic() + 60
        while get_json(run_url.format(first.base))["status"] != "running":
            assert time.monotonic() < deadline, "the sleeper never started"
            time.sleep(0.2)
        web = web_process(first.pid)

        first.kill_group()
        deadline = time.monotonic() + 10
        while state_of(web) != "Z":  # dead, and (as the holder never reaps) a zombie
            assert time.monotonic() < deadline, f"the web server is {state_of(web)}, not a zombie"
            time.sleep(0.05)

        second = Server(data_env)  # at once, on the same data
        second.wait_ready()
        ready = time.monotonic()
        while (found := get_json(run_url.format(second.base)))["status"] != "done":
            assert time.monotonic() - ready < 10, f"the run is still {found['status']}"
            time.sleep(0.2)
        assert found["verdict"] == "internal_error" and "restarted" in found["detail"]
        assert state_of(web) == "Z"  # it was judged gone while still a zombie

        events = f"{second.base}/api/runs/{run['id']}/events?token={run['token']}"
        started = time.monotonic()
        with urllib.request.urlopen(events, timeout=30) as stream:
            text = stream.read().decode()  # returns only once the server closes the stream
        assert time.monotonic() - started < 10
        assert "event: result" in text and '"verdict": "internal_error"' in text
    finally:
        for server in (first, second):
            if server is not None:
                server.stop()
