"""The worker's handle on one zygote process: start it, ask it to fork a run, replace it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

from sandbox.jail_spec import JailSpec

READY_TIMEOUT_SECONDS = 180


NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"


# OpenMP threads that wait for work sleep rather than spin. The worker runs one CPU run per
# core, each with two threads under a two-CPU quota, so runs side by side oversubscribe the
# cores; spinning threads then burn the quota that the working ones need. Measured with
# bench/omp_wait.py (a 4.6 s training sample beside a cold torch.compile took 59.9 s with
# spinning threads, 5.1 s with sleeping ones; sandbox/README.md has the table).
# libgomp reads it when torch loads it, in the zygote: a run cannot change it afterwards.
OPENMP_WAITING = {"OMP_WAIT_POLICY": "PASSIVE"}


def zygote_env(backend: str) -> dict[str, str]:
    """The whole environment a zygote (and so every jail) starts from: nothing of ours. A CPU
    zygote hides the GPUs from CUDA too: importing torch's compiler counts devices, and a
    count cached before the fork would tell a CPU run that CUDA is available."""
    hidden = {"CUDA_VISIBLE_DEVICES": ""} if backend == "cpu" else {}
    return {
        **hidden,
        # torch counts GPUs while it imports; counted through the CUDA runtime, that marks
        # every later fork as unable to use CUDA ("Cannot re-initialize CUDA in forked
        # subprocess"). Counted through NVML, forks of the zygote can (seen on an H100).
        NVML_CHECK: "1",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
        # A run that loads a cached graph would preprocess a precompiled header first
        # (0.15 s a run, measured); compiling without one costs no more that we could
        # measure (the ResNet-50 lab's cold compile: 64.1 s without, 61.8 s with).
        "TORCHINDUCTOR_CPP_CACHE_PRECOMPILE_HEADERS": "0",
        **OPENMP_WAITING,
    }


class ZygoteDied(Exception):
    """The warm process stopped answering."""


class Zygote:
    """A warm `python -m sandbox.zygote` process for one backend."""

    def __init__(self, backend: str, env: dict[str, str], state_dir: Path) -> None:
        """Start it. Call this from the thread that runs the worker's event loop (its main
        thread): the zygote dies when the thread that started it ends (launch.py)."""
        self.backend = backend
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._socket = ours
        self._lock = threading.Lock()
        # A clean environment: nothing of the app's (secrets, database URL) reaches it, and
        # /proc/1/environ in a jail shows only this. launch.py gives it its own mount
        # namespace, where Python has neutral paths, then becomes the zygote.
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sandbox.launch",
                str(state_dir),
                backend,
                str(theirs.fileno()),
                str(os.getpid()),
            ],
            pass_fds=(theirs.fileno(),),
            # launch.py must import this package before it has the neutral paths: from this
            # checkout, whether or not it is installed (it starts in /, so not from the working
            # folder). It replaces PYTHONPATH with the neutral one before it becomes the zygote.
            env={**env, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
            stdin=subprocess.DEVNULL,
            cwd="/",
        )
        theirs.close()
        self.started_at = time.monotonic()
        self.runs = 0
        self.warm_up_seconds: float | None = None
        # Set when a fork failed: a killed zygote with a large address space can take a
        # while to be reaped, and must not be handed another run meanwhile.
        self.broken = False

    def wait_ready(self) -> None:
        self._socket.settimeout(READY_TIMEOUT_SECONDS)
        try:
            message = self._socket.recv(4096)
        except OSError as exc:
            raise ZygoteDied(f"the {self.backend} warm process did not start: {exc}") from None
        if not message:
            raise ZygoteDied(f"the {self.backend} warm process exited while starting")
        self.warm_up_seconds = json.loads(message)["warm_up_seconds"]
        self._socket.settimeout(30)

    def alive(self) -> bool:
        return not self.broken and self.process.poll() is None

    def fork(self, spec: JailSpec, fds: list[int]) -> int:
        """Fork a supervisor for one run; return its pid. Thread-safe; blocks briefly."""
        payload = json.dumps({"spec": asdict(spec)}).encode()
        with self._lock:
            try:
                socket.send_fds(self._socket, [payload], fds)
                reply = self._socket.recv(4096)
            except OSError as exc:
                self.broken = True
                raise ZygoteDied(str(exc)) from None
            if not reply:
                self.broken = True
                raise ZygoteDied("the connection closed")
        self.runs += 1
        return int(json.loads(reply)["pid"])

    def stop(self) -> None:
        """Close the socket: the zygote exits once the runs it forked have ended (killing
        it would kill them, see jail.py), unless it is broken. It is reaped in the
        background meanwhile."""
        self._socket.close()
        if self.broken:
            self.process.kill()  # it failed a fork: dead already, or hung; its runs are lost
        threading.Thread(target=self.process.wait, name="reap-zygote", daemon=True).start()
