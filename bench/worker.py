"""A sandbox worker of the bench's own (root is needed), and runs through its socket."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sandbox import cgroups  # noqa: E402
from sandbox.protocol import PROTOCOL_VERSION  # noqa: E402


def send(sock_path: Path, message: dict[str, Any]) -> list[dict[str, Any]]:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock_path))
        s.sendall(json.dumps(message).encode() + b"\n")
        events = []
        for line in s.makefile("rb"):
            events.append(json.loads(line))
            if events[-1]["type"] in ("result", "status", "error"):
                return events
    return events


def status(sock_path: Path) -> dict[str, Any]:
    try:
        return send(sock_path, {"op": "status"})[0]
    except OSError:
        return {}


def run_lab(
    sock_path: Path, code: str, backend: str = "cpu", limits: dict[str, Any] | None = None
) -> tuple[list[dict[str, Any]], float, dict[str, Any], str]:
    """The lab's BACKPROP_LAB_RESULT lines, the run's wall seconds as the client saw them,
    the run's result and its output."""
    request = {
        "id": f"b{time.monotonic_ns()}",
        "code": code,
        "backend": backend,
        "limits": limits or {},
    }
    started = time.perf_counter()
    events = send(sock_path, {"op": "run", "v": PROTOCOL_VERSION, "request": request})
    wall = time.perf_counter() - started
    out = "".join(e.get("data", "") for e in events)
    found = re.findall(r"^BACKPROP_LAB_RESULT (\{.*\})$", out, re.MULTILINE)
    return [json.loads(line) for line in found], wall, events[-1].get("result", {}), out


def cgroup_args(name: str) -> list[str]:
    """On a cgroup v2 host, `--cgroup` with a folder of the bench's own (a shell's cgroup,
    where this runs, cannot hand controllers to runs). None on v1."""
    home = cgroups.layout.home_at_root("backprop-bench")
    if home is None:
        return []
    (home / name).mkdir(exist_ok=True)
    return ["--cgroup", str(home / name)]


@contextmanager
def started_worker(
    *args: str, python: tuple[str, ...] = ("-m", "sandbox"), checkout: Path = ROOT
) -> Iterator[Path]:
    """`python -m sandbox` (or `python *python`, a starter that runs it) on a private state
    folder, ready; its socket. Stopped at the end. `checkout`: the code it runs (another
    revision's work tree, for a before-and-after)."""
    base = Path(tempfile.mkdtemp(prefix="backprop-bench-worker-"))
    sock_path = base / "worker.sock"
    log_path = base / "worker.log"
    cgroup = cgroup_args(base.name)
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(
            [sys.executable, *python, "--socket", str(sock_path),
             "--state-dir", str(base / "state"), *cgroup, *args],
            cwd=checkout, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while status(sock_path).get("state") != "ready":
            if worker.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the worker did not get ready: {log_path.read_text()}")
            time.sleep(0.3)
        yield sock_path
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        shutil.rmtree(base, ignore_errors=True)
        if cgroup:  # ["--cgroup", folder] on a v2 host
            cgroups.layout.remove_home(Path(cgroup[1]))
