"""The worker's handle on one zygote process: start it, ask it to fork a run, replace it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict

from sandbox.jail import JailSpec

READY_TIMEOUT_SECONDS = 180


def zygote_env() -> dict[str, str]:
    """The whole environment a zygote (and so every jail) starts from: nothing of ours."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


class ZygoteDied(Exception):
    """The warm process stopped answering."""


class Zygote:
    """A warm `python -m sandbox.zygote` process for one backend."""

    def __init__(self, backend: str, env: dict[str, str]) -> None:
        self.backend = backend
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._socket = ours
        self._lock = threading.Lock()
        # A clean environment: nothing of the app's (secrets, database URL) reaches it, and
        # /proc/1/environ in a jail shows only this.
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sandbox.zygote", backend, str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            env=env,
            stdin=subprocess.DEVNULL,
            cwd="/",
        )
        theirs.close()
        self.started_at = time.monotonic()
        self.runs = 0
        self.warm_up_seconds: float | None = None

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
        return self.process.poll() is None

    def fork(self, spec: JailSpec, fds: list[int]) -> int:
        """Fork a supervisor for one run; return its pid. Thread-safe; blocks briefly."""
        payload = json.dumps({"spec": asdict(spec)}).encode()
        with self._lock:
            try:
                socket.send_fds(self._socket, [payload], fds)
                reply = self._socket.recv(4096)
            except OSError as exc:
                raise ZygoteDied(str(exc)) from None
            if not reply:
                raise ZygoteDied("the connection closed")
        self.runs += 1
        return int(json.loads(reply)["pid"])

    def stop(self) -> None:
        """Close the socket (the zygote exits on EOF), then make sure it is gone."""
        self._socket.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
